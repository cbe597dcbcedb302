"""The guard at repository scale: it reads only the paths a commit changes (git's
`diff-index --cached` against HEAD and each merged parent), with git's own meaning of
the index (intent-to-add, mode-only changes, submodules, split and sparse indexes,
temporary indexes of partial commits), and records the extensions it proved."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from git_gasp.conformance.history.proven import load_extensions
from git_gasp.guard import commit_guard, staged
from tests.testing.events import goal_pair, line
from tests.testing.run import git, out

pytestmark = pytest.mark.slow  # real `git commit` through the installed hook, many times

LOG = "state/events.jsonl"


def append(repo: Path, data: bytes, rel: str = LOG) -> None:
    with open(repo / rel, "ab") as f:
        f.write(data)


def commit(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "commit", "-q", "-m", "c", *args], cwd=repo,
                          capture_output=True)


def refused(proc: subprocess.CompletedProcess, *needles: str) -> str:
    text = out(proc)
    assert proc.returncode != 0, text
    for needle in needles:
        assert needle in text, text
    return text


def passed(proc: subprocess.CompletedProcess) -> None:
    assert proc.returncode == 0, out(proc)


def guard_here(repo: Path, monkeypatch) -> list:
    """The guard run in process, as the hook runs it in `repo`."""
    monkeypatch.chdir(repo)
    return commit_guard.run_guard(repo)


def _blob(repo: Path, spec: str) -> bytes:
    return git(repo, "rev-parse", spec).strip().encode()


@pytest.fixture
def wide(agent: Path) -> Path:
    """The agent with 30 directories of 4 files each beside it, committed."""
    for d in range(30):
        sub = agent / "src" / f"pkg{d:02d}" / "inner"
        sub.mkdir(parents=True)
        for f in range(4):
            (sub / f"f{f}.py").write_text(f"# {d} {f}\n")
    git(agent, "add", "src")
    git(agent, "commit", "-q", "--no-verify", "-m", "a project beside the agent")
    append(agent, goal_pair(1))
    git(agent, "add", LOG)
    git(agent, "commit", "-q", "--no-verify", "-m", "one pair")
    return agent


# ---- only what changed is read ----------------------------------------------------

def _asked(monkeypatch) -> list[bytes]:
    """Every path the guard looks up in a commit's tree (`git ls-tree`), recorded."""
    asked: list[bytes] = []
    real = staged.TreeFiles.prefetch

    def spy(self, paths):
        paths = list(paths)
        asked.extend(p for p in paths if p not in self._found)
        return real(self, paths)

    monkeypatch.setattr(staged.TreeFiles, "prefetch", spy)
    return asked


def test_only_the_changed_paths_are_looked_up_and_the_index_is_not_parsed(wide, monkeypatch):
    asked = _asked(monkeypatch)

    def no_index(*_a, **_k):
        raise AssertionError("the guard parsed the index itself")

    monkeypatch.setattr("dulwich.index.Index.__init__", no_index)
    monkeypatch.setattr("dulwich.object_store.BaseObjectStore.iter_tree_contents", no_index)
    append(wide, goal_pair(2))
    git(wide, "add", LOG)
    assert guard_here(wide, monkeypatch) == []
    # the markers of the roots above the log (HEAD's log entry comes from the diff)
    assert set(asked) <= {b"AGENT.md", b"state/AGENT.md", b"state/state/events.jsonl"}, asked
    # an in-place edit is still found
    log = wide / LOG
    log.write_bytes(log.read_bytes().replace(b"goal 1", b"goal X"))
    git(wide, "add", LOG)
    assert [r.rule for r in guard_here(wide, monkeypatch)] == ["append-only, one-parent rule"]


def test_a_change_deep_in_the_tree_looks_up_only_the_roots_on_its_path(wide, monkeypatch):
    asked = _asked(monkeypatch)
    (wide / "src/pkg07/inner/JOURNAL.md").write_text("an unrelated journal\n")
    git(wide, "add", "src")
    assert guard_here(wide, monkeypatch) == []
    # root, src, src/pkg07, src/pkg07/inner: their AGENT.md and log, never the other packages
    dirs = {p.rsplit(b"/", 1)[0] if p.endswith(b"AGENT.md") and b"/" in p else
            p[:-len(b"/state/events.jsonl")] if p.endswith(b"/state/events.jsonl") else b""
            for p in asked}
    assert dirs <= {b"", b"src", b"src/pkg07", b"src/pkg07/inner"}, asked


# ---- git's meaning of the index ------------------------------------------------

def test_intent_to_add_entries_are_what_the_commit_leaves_out(agent):
    """`git add -N` stages nothing: the commit leaves the path out, so does the guard."""
    append(agent, goal_pair(1))
    git(agent, "add", LOG)
    passed(commit(agent))
    (agent / "memory" / "extra").mkdir(parents=True)
    (agent / "memory/extra/facts.jsonl").write_text("not yet\n")
    git(agent, "add", "-N", "memory/extra/facts.jsonl")
    (agent / "notes.txt").write_text("n\n")
    git(agent, "add", "notes.txt")
    passed(commit(agent))
    assert "memory/extra/facts.jsonl" not in git(agent, "ls-tree", "-r", "--name-only", "HEAD")
    # the log replaced by an intent-to-add entry: the commit would delete it
    git(agent, "rm", "-q", "--cached", LOG)
    git(agent, "add", "-N", LOG)
    refused(commit(agent), LOG, "deleted")


def test_a_mode_only_change_is_seen(agent):
    append(agent, goal_pair(1))
    git(agent, "add", LOG)
    passed(commit(agent))
    git(agent, "update-index", "--chmod=+x", LOG)  # the same blob, another mode: allowed
    passed(commit(agent))
    assert git(agent, "ls-tree", "HEAD", LOG).startswith("100755")
    sha = git(agent, "rev-parse", f"HEAD:{LOG}").strip()
    git(agent, "update-index", "--cacheinfo", f"120000,{sha},{LOG}")  # the same blob as a link
    refused(commit(agent), LOG, "staged as a symlink")


def test_a_log_replaced_by_a_submodule_is_refused_whatever_diff_config_says(agent):
    append(agent, goal_pair(1))
    git(agent, "add", LOG)
    passed(commit(agent))
    git(agent, "config", "diff.ignoreSubmodules", "all")
    head = git(agent, "rev-parse", "HEAD").strip()
    git(agent, "update-index", "--cacheinfo", f"160000,{head},{LOG}")
    refused(commit(agent), LOG, "staged as a submodule")


def test_a_partial_commit_checks_gits_temporary_index_not_the_staged_one(agent):
    """`git commit -- PATH` commits HEAD plus PATH (GIT_INDEX_FILE names that index):
    a bad change staged for the log is not part of it; `--include` adds it."""
    append(agent, goal_pair(1))
    git(agent, "add", LOG)
    passed(commit(agent))
    log = agent / LOG
    log.write_bytes(log.read_bytes().replace(b"goal 1", b"goal X"))
    git(agent, "add", LOG)  # staged, but not in the partial commit below
    (agent / "notes.txt").write_text("n\n")
    git(agent, "add", "notes.txt")
    (agent / "notes.txt").write_text("n2\n")
    passed(commit(agent, "--", "notes.txt"))
    assert git(agent, "show", f"HEAD:{LOG}").count("goal X") == 0
    refused(commit(agent, "--include", "notes.txt"), "modified in place")


def test_an_unmerged_append_only_file_is_refused(agent, monkeypatch):
    append(agent, goal_pair(1))
    git(agent, "add", LOG)
    passed(commit(agent))
    git(agent, "checkout", "-q", "-b", "theirs")
    append(agent, goal_pair(2))
    git(agent, "commit", "-q", "-a", "--no-verify", "-m", "theirs")
    git(agent, "checkout", "-q", "main")
    append(agent, goal_pair(3))
    git(agent, "commit", "-q", "-a", "--no-verify", "-m", "ours")
    git(agent, "config", "--remove-section", "merge.gasp")  # a text merge: a conflict
    git(agent, "merge", "-q", "theirs", check=False)
    assert "U" in git(agent, "status", "--porcelain", "--", LOG)[:2]
    rejections = guard_here(agent, monkeypatch)
    assert [r.path for r in rejections] == [LOG]
    assert "unmerged" in rejections[0].message


def test_the_first_commit_is_guarded(tmp_path, monkeypatch):
    repo = tmp_path / "fresh"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "state").mkdir()
    (repo / LOG).write_bytes(line("e1", "note.added", {}, "nothing"))
    git(repo, "add", LOG)
    rejections = guard_here(repo, monkeypatch)
    assert [r.rule for r in rejections] == ["check 5, causation"]
    (repo / LOG).write_bytes(goal_pair(1))
    git(repo, "add", LOG)
    assert guard_here(repo, monkeypatch) == []


@pytest.mark.parametrize("setup", ["split index", "sparse index", "ignorecase"])
def test_index_forms_git_reads_for_the_guard(agent, setup):
    append(agent, goal_pair(1))
    git(agent, "add", LOG)
    passed(commit(agent))
    if setup == "split index":
        git(agent, "update-index", "--split-index")
        assert any(p.name.startswith("sharedindex.") for p in (agent / ".git").iterdir())
    elif setup == "sparse index":
        git(agent, "sparse-checkout", "init", "--cone", "--sparse-index")
        git(agent, "sparse-checkout", "set", "state")
        assert not (agent / "journal").exists()
    else:
        git(agent, "config", "core.ignorecase", "true")
    append(agent, goal_pair(2))
    git(agent, "add", LOG)
    passed(commit(agent))
    log = agent / LOG
    log.write_bytes(log.read_bytes().replace(b"goal 1", b"goal X"))
    git(agent, "add", LOG)
    refused(commit(agent), f"{LOG}:", "modified in place")


# ---- merges: each parent's diff -------------------------------------------------

def _branch(agent: Path, name: str, rel: str, data: bytes) -> None:
    """Branch `name` off main appending `data` to `rel`; back on main."""
    git(agent, "checkout", "-q", "-b", name, "main")
    append(agent, data, rel)
    git(agent, "commit", "-q", "-a", "--no-verify", "-m", name)
    git(agent, "checkout", "-q", "main")


def _committed_pair(agent: Path) -> bytes:
    append(agent, goal_pair(1))
    git(agent, "add", LOG)
    passed(commit(agent))
    return (agent / LOG).read_bytes()


def test_a_merge_keeping_heads_log_still_answers_to_the_other_parent(agent):
    """The staged log equals HEAD's: only the diff against the merged parent shows
    that its lines are lost (`git merge -s ours`)."""
    _committed_pair(agent)
    _branch(agent, "theirs", LOG, goal_pair(2))
    proc = subprocess.run(["git", "merge", "-q", "-s", "ours", "--no-edit", "theirs"],
                          cwd=agent, capture_output=True)
    refused(proc, "merge rule", "the merge loses lines of")


def test_an_octopus_merge_answers_to_every_merged_parent(agent):
    base = _committed_pair(agent)
    _branch(agent, "a", "journal/JOURNAL.md", b"a's entry\n")
    _branch(agent, "b", LOG, goal_pair(3))
    (agent / "notes.txt").write_text("main\n")
    git(agent, "add", "notes.txt")
    git(agent, "commit", "-q", "--no-verify", "-m", "main")
    git(agent, "merge", "-q", "--no-commit", "a", "b")
    assert len((agent / ".git/MERGE_HEAD").read_text().split()) == 2
    (agent / LOG).write_bytes(base)  # b's pair is lost
    git(agent, "add", LOG)
    refused(commit(agent, "--no-edit"), "merge rule", "parent 3")
    (agent / LOG).write_bytes(base + goal_pair(3))
    git(agent, "add", LOG)
    passed(commit(agent, "--no-edit"))
    assert len(git(agent, "rev-list", "--parents", "-n1", "HEAD").split()) == 4


# ---- the proofs recorded for check 4 ---------------------------------------------

def _proven(repo: Path) -> set[tuple[bytes, bytes]]:
    return load_extensions(os.fspath(repo / ".git"))


def test_an_accepted_append_is_recorded_and_a_refused_one_is_not(agent):
    append(agent, goal_pair(1))
    git(agent, "add", LOG)
    passed(commit(agent))
    append(agent, goal_pair(2))
    git(agent, "add", LOG)
    passed(commit(agent))  # HEAD's log index is cached: proved by hash
    pair = (_blob(agent, f"HEAD~:{LOG}"), _blob(agent, f"HEAD:{LOG}"))
    assert pair in _proven(agent)
    append(agent, goal_pair(3) + line("e_bad", "note.added", {}, "nothing"))
    git(agent, "add", LOG)
    refused(commit(agent), "check 5, causation")
    assert not any(new == _blob(agent, f":{LOG}") for _old, new in _proven(agent))
    git(agent, "checkout", "HEAD", "--", LOG)
    for stale in (agent / ".git" / "gasp").glob("guard-*.facts"):
        stale.unlink()  # no cached index: proved by content
    (agent / "journal/JOURNAL.md").write_text(
        (agent / "journal/JOURNAL.md").read_text() + "entry\n")
    append(agent, goal_pair(4))
    git(agent, "add", LOG, "journal/JOURNAL.md")
    passed(commit(agent))
    proven = _proven(agent)
    assert (_blob(agent, f"HEAD~:{LOG}"), _blob(agent, f"HEAD:{LOG}")) in proven
    journal = "journal/JOURNAL.md"
    assert (_blob(agent, f"HEAD~:{journal}"), _blob(agent, f"HEAD:{journal}")) in proven


def test_a_merge_records_each_parent_its_result_extends(agent):
    base = _committed_pair(agent)
    _branch(agent, "theirs", LOG, goal_pair(2))
    (agent / "notes.txt").write_text("main\n")
    git(agent, "add", "notes.txt")
    git(agent, "commit", "-q", "--no-verify", "-m", "main")
    git(agent, "merge", "-q", "--no-commit", "theirs")
    (agent / LOG).write_bytes(base + goal_pair(2) + goal_pair(9))  # extends both parents
    git(agent, "add", LOG)
    passed(commit(agent, "--no-edit"))
    proven, merged = _proven(agent), _blob(agent, f"HEAD:{LOG}")
    assert (_blob(agent, f"HEAD^1:{LOG}"), merged) in proven
    assert (_blob(agent, f"HEAD^2:{LOG}"), merged) in proven


def test_a_merge_does_not_record_a_parent_its_result_reorders(agent):
    base = _committed_pair(agent)
    _branch(agent, "theirs", LOG, goal_pair(2))
    append(agent, goal_pair(3))
    git(agent, "commit", "-q", "-a", "--no-verify", "-m", "ours")
    git(agent, "config", "--remove-section", "merge.gasp")  # a text merge: a conflict
    git(agent, "merge", "-q", "--no-commit", "theirs", check=False)
    (agent / LOG).write_bytes(base + goal_pair(3) + goal_pair(2))  # ours, then theirs
    git(agent, "add", LOG)
    passed(commit(agent, "--no-edit"))
    proven, merged = _proven(agent), _blob(agent, f"HEAD:{LOG}")
    assert (_blob(agent, f"HEAD^1:{LOG}"), merged) in proven
    assert (_blob(agent, f"HEAD^2:{LOG}"), merged) not in proven


def test_check_4_takes_the_guards_proof_instead_of_comparing_again(agent):
    from git_gasp.conformance.history.check import check_history

    check_history(agent)  # the walk so far is verified and cached
    append(agent, goal_pair(1))
    git(agent, "add", LOG)
    passed(commit(agent))
    pair = (_blob(agent, f"HEAD~:{LOG}"), _blob(agent, f"HEAD:{LOG}"))
    assert pair in _proven(agent)
    result = check_history(agent)
    assert result.failures == [] and result.commits_walked == 1
    assert result.stats.proven_known >= 1 and result.stats.read == 0
    # Without the cache nothing recorded is trusted: the same pair is proven again.
    cold = check_history(agent, use_cache=False)
    assert cold.failures == [] and cold.stats.proven_known == 0
