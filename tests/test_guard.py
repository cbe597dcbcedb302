"""The pre-commit guard, through real `git commit` in hermetic repos."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import gasp, git, out
from tests.events import goal_pair, line, ops

LOG = "state/events.jsonl"


@pytest.fixture
def agent(tmp_path) -> Path:
    """`git gasp init`: the layout is committed and the guard installed."""
    proc = gasp(tmp_path, "init", "agent", "--agent-id", "tester")
    assert proc.returncode == 0, out(proc)
    return tmp_path / "agent"


def append(repo: Path, data: bytes, rel: str = LOG) -> None:
    with open(repo / rel, "ab") as f:
        f.write(data)


def commit(repo: Path, *paths: str, msg: str = "c") -> subprocess.CompletedProcess:
    git(repo, "add", "--", *(paths or (LOG,)))
    return subprocess.run(["git", "commit", "-q", "-m", msg], cwd=repo, capture_output=True)


def refused(proc: subprocess.CompletedProcess, *needles: str) -> str:
    text = out(proc)
    assert proc.returncode == 1, text
    assert "commit refused" in text and "fix (" in text, text
    for needle in needles:
        assert needle in text, text
    return text


def test_pure_append_is_allowed(agent):
    append(agent, goal_pair(1))
    assert commit(agent).returncode == 0
    append(agent, goal_pair(2))
    proc = commit(agent)
    assert proc.returncode == 0, out(proc)
    assert gasp(agent, "check").returncode == 0


def test_in_place_edit_is_refused_naming_file_line_and_rule(agent):
    append(agent, goal_pair(1) + goal_pair(2))
    assert commit(agent).returncode == 0
    log = agent / LOG
    log.write_bytes(log.read_bytes().replace(b"goal 2", b"goal X"))
    refused(commit(agent), f"{LOG}:3:", "one-parent rule", "modified in place")


def test_deletion_is_refused(agent):
    append(agent, goal_pair(1))
    assert commit(agent).returncode == 0
    git(agent, "rm", "-q", "--", LOG)
    refused(subprocess.run(["git", "commit", "-q", "-m", "rm"], cwd=agent, capture_output=True),
            LOG, "deleted", "git restore")


def test_truncation_of_facts_and_journal_is_refused(agent):
    append(agent, b"entry\n", "journal/JOURNAL.md")
    assert commit(agent, "journal/JOURNAL.md").returncode == 0
    (agent / "journal/JOURNAL.md").write_bytes(b"# Journal\n")
    refused(commit(agent, "journal/JOURNAL.md"), "journal/JOURNAL.md:2:")


def test_append_to_an_unterminated_last_line_is_refused(agent):
    append(agent, goal_pair(1)[:-1])  # committed without its final newline
    git(agent, "add", LOG)
    git(agent, "commit", "-q", "--no-verify", "-m", "torn")
    append(agent, b', "x"')
    refused(commit(agent), "unterminated last line 2 was extended")


def test_completing_an_unterminated_line_then_appending_is_allowed(agent):
    append(agent, goal_pair(1)[:-1])
    git(agent, "add", LOG)
    git(agent, "commit", "-q", "--no-verify", "-m", "torn")
    append(agent, b"\n" + goal_pair(2))
    proc = commit(agent)
    assert proc.returncode == 0, out(proc)


@pytest.mark.parametrize("bad, needle", [
    (b'{"id":"e1","kind":"x"}\n', "missing fields"),
    (b"not json\n", "invalid JSON"),
    (b'{"id":"e1"\n', "invalid JSON"),
    (line("e1", "goal.created", {"id": "g"}).replace(b"\n", b"\r\n"), "CRLF"),
    (line("e1", "note.created", {})[:-1], "no terminating newline"),
])
def test_a_malformed_appended_envelope_is_refused(agent, bad, needle):
    append(agent, goal_pair(1))
    assert commit(agent).returncode == 0
    append(agent, bad)
    refused(commit(agent), f"{LOG}:3:", "check 1, envelope", needle)


def test_broken_causation_is_refused(agent):
    append(agent, goal_pair(1))
    assert commit(agent).returncode == 0
    append(agent, line("e_note", "note.added", {}, "no_such_event"))
    refused(commit(agent), f"{LOG}:3:", "check 5, causation", "names no event in the log")


def test_a_reused_id_and_an_uncaused_non_root_are_refused(agent):
    append(agent, goal_pair(1))
    assert commit(agent).returncode == 0
    append(agent, line("event_g1", "note.created", {}) + line("e2", "note.added", {}))
    text = refused(commit(agent), "is used again (first on line 1)", "has no causation")
    assert f"{LOG}:3:" in text and f"{LOG}:4:" in text


def test_causation_naming_a_committed_event_is_allowed(agent):
    append(agent, goal_pair(1))
    assert commit(agent).returncode == 0
    append(agent, line("e_note", "note.added", {}, "event_g1"))
    proc = commit(agent)
    assert proc.returncode == 0, out(proc)


def test_a_missing_pair_is_refused(agent):
    append(agent, goal_pair(1))
    assert commit(agent).returncode == 0
    append(agent, line("event_g2", "goal.created", {"id": "goal_2", "title": "t",
                                                   "status": "Open"}))
    refused(commit(agent), f"{LOG}:3:", "check 7, pairing", "has no state.ops_applied pair")


def test_a_second_claim_on_a_committed_domain_event_is_refused(agent):
    append(agent, goal_pair(1))
    assert commit(agent).returncode == 0
    append(agent, ops("e_again", "event_g1", {"CreateNode": {
        "id": "goal_1", "kind": "goal", "props": {"title": "goal 1", "status": "Open"}}}))
    refused(commit(agent), f"{LOG}:3:", "is claimed by 2 ops events")


def test_ops_caused_by_ops_is_refused(agent):
    append(agent, goal_pair(1))
    assert commit(agent).returncode == 0
    append(agent, ops("e_o2", "event_g1o"))
    refused(commit(agent), "caused by another ops event")


def test_pair_appended_later_for_a_committed_domain_event_is_allowed(agent):
    domain = goal_pair(1).splitlines(keepends=True)
    append(agent, domain[0])
    git(agent, "add", LOG)
    git(agent, "commit", "-q", "--no-verify", "-m", "domain only")
    append(agent, domain[1])
    proc = commit(agent)
    assert proc.returncode == 0, out(proc)


def test_commit_with_paths_uses_gits_temporary_index(agent):
    """`git commit PATH` stages into a temporary index (GIT_INDEX_FILE) the hook must read."""
    append(agent, goal_pair(1))
    assert commit(agent).returncode == 0
    log = agent / LOG
    log.write_bytes(log.read_bytes().replace(b"goal 1", b"goal X"))  # not staged
    proc = subprocess.run(["git", "commit", "-q", "-m", "x", "--", LOG], cwd=agent,
                          capture_output=True)
    refused(proc, "modified in place")
    proc = subprocess.run(["git", "commit", "-q", "-a", "-m", "x"], cwd=agent,
                          capture_output=True)
    refused(proc, "modified in place")


def test_agent_root_in_a_subdirectory(tmp_path):
    top = tmp_path / "mono"
    top.mkdir()
    git(top, "init", "-q")
    (top / "README").write_text("hi\n")
    git(top, "add", "README")
    git(top, "commit", "-q", "-m", "readme")
    assert gasp(top, "init", "agents/a1", "--agent-id", "a1").returncode == 0
    sub = top / "agents" / "a1"
    assert git(sub, "check-attr", "merge", "--", LOG).strip().endswith("merge: gasp")
    append(sub, goal_pair(1))
    assert commit(sub).returncode == 0
    log = sub / LOG
    log.write_bytes(b"")
    refused(commit(sub), f"agents/a1/{LOG}")
    git(sub, "reset", "-q", "--", LOG)
    (top / "JOURNAL.md").write_text("not an agent's\n")  # outside the agent root: free
    git(top, "add", "JOURNAL.md")
    git(top, "commit", "-q", "-m", "j")
    (top / "JOURNAL.md").write_text("rewritten\n")
    assert commit(top, "JOURNAL.md").returncode == 0


def test_core_hooks_path_installs_there_and_guards(agent, tmp_path):
    hooks = tmp_path / "shared-hooks"
    git(agent, "config", "core.hooksPath", str(hooks))
    proc = gasp(agent, "install-hooks")
    assert proc.returncode == 0, out(proc)
    assert (hooks / "pre-commit").is_file()
    append(agent, goal_pair(1))
    assert commit(agent).returncode == 0
    log = agent / LOG
    log.write_bytes(log.read_bytes().replace(b"goal 1", b"goal X"))
    refused(commit(agent), "modified in place")


def test_linked_worktree(agent, tmp_path):
    wt = tmp_path / "wt"
    git(agent, "worktree", "add", "-q", "-b", "side", str(wt))
    append(wt, goal_pair(1))
    proc = commit(wt)
    assert proc.returncode == 0, out(proc)
    log = wt / LOG
    log.write_bytes(log.read_bytes().replace(b"goal 1", b"goal X"))
    refused(commit(wt), "modified in place")
    assert git(agent, "rev-parse", "HEAD") != git(wt, "rev-parse", "HEAD")


def _diverged(agent: Path) -> tuple[bytes, bytes, bytes]:
    append(agent, goal_pair(1))
    assert commit(agent).returncode == 0
    base = (agent / LOG).read_bytes()
    git(agent, "checkout", "-q", "-b", "theirs")
    append(agent, goal_pair(2))
    assert commit(agent).returncode == 0
    git(agent, "checkout", "-q", "main")
    append(agent, goal_pair(3))
    assert commit(agent).returncode == 0
    # A text merge is all we want here (the driver is tested elsewhere).
    git(agent, "config", "--remove-section", "merge.gasp")
    git(agent, "merge", "--no-commit", "theirs", check=False)
    return base, goal_pair(3), goal_pair(2)


def test_merge_commit_of_a_proper_union_is_allowed(agent):
    base, ours, theirs = _diverged(agent)
    (agent / LOG).write_bytes(base + ours + theirs)
    proc = commit(agent)
    assert proc.returncode == 0, out(proc)
    assert len(git(agent, "rev-parse", "HEAD^2").strip()) == 40
    assert gasp(agent, "check").returncode == 0


def test_merge_commit_losing_the_other_parents_lines_is_refused(agent):
    base, ours, _theirs = _diverged(agent)
    (agent / LOG).write_bytes(base + ours)
    refused(commit(agent), "merge rule", "the merge loses lines of")
