"""pre-receive ``--check``: checks 1, 5 and 7 on the log lines a push appends. A client
without hooks pushing a bad envelope, a dangling causation, a broken pairing or a
reused id is refused with one line naming the ref, the commit, path:line and why (the
remote unchanged), and accepted by a remote without --check; old bad lines in history
never refuse a good push; several commits, merges, file:// and `git daemon`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.guard.test_receive import commit, head_of, push, refused
from tests.testing.daemon import git_daemon
from tests.testing.events import create, goal_pair, line, ops
from tests.testing.run import gasp, git, out

pytestmark = pytest.mark.slow  # real pushes

LOG = "state/events.jsonl"


def bare(tmp_path: Path, name: str, *options: str) -> Path:
    remote = tmp_path / name
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    proc = gasp(remote, "install-hooks", "--server", *options)
    assert proc.returncode == 0, out(proc)
    return remote


def append(repo: Path, data: bytes, rel: str = LOG) -> None:
    with open(repo / rel, "ab") as fh:
        fh.write(data)


@pytest.fixture
def pair(agent, tmp_path):
    """(checked remote, unchecked remote, a clone without hooks): both remotes hold the
    agent's history and two goals."""
    checked, plain = bare(tmp_path, "checked.git", "--check"), bare(tmp_path, "plain.git")
    append(agent, goal_pair(1) + goal_pair(2))
    git(agent, "add", "-A")
    git(agent, "commit", "-q", "-m", "two goals")
    for remote in (checked, plain):
        proc = push(agent, str(remote), "main")
        assert proc.returncode == 0, proc.stderr
    rogue = tmp_path / "rogue"
    git(tmp_path, "clone", "-q", "-o", "checked", str(checked), str(rogue))
    git(rogue, "remote", "add", "plain", str(plain))
    return checked, plain, rogue


def test_install_check_writes_the_option_and_needs_server(tmp_path, agent):
    remote = bare(tmp_path, "r.git", "--check")
    hook = (remote / "hooks" / "pre-receive").read_text()
    assert "gasp_options='--check'" in hook
    proc = gasp(remote, "install-hooks", "--server")
    assert "without the appended lines' checks" in out(proc)
    assert "gasp_options=''" in (remote / "hooks" / "pre-receive").read_text()
    proc = gasp(remote, "install-hooks", "--server", "--check")
    assert "check the appended lines too" in out(proc)
    proc = gasp(agent, "install-hooks", "--check")
    assert proc.returncode == 2
    assert proc.stderr.decode().strip().splitlines() == [
        "git gasp: error: --check goes with --server (the pre-receive hook's checks)"]
    proc = gasp(remote, "hook", "pre-commit", "--check")
    assert proc.returncode == 2 and len(proc.stderr.decode().strip().splitlines()) == 1


BAD = {  # kind -> (lines appended after line 6, line of the problem, rule, why)
    "envelope": (b'{"id": "event_bad", "kind": "goal.created"}\n', 7,
                 "[check 1, envelope]", "missing fields"),
    "causation": (line("event_c", "task.finished", {"id": "t"}, "event_nowhere"), 7,
                  "[check 5, causation]", "causation_id event_nowhere names no event"),
    "pairing": (line("event_g9", "goal.created", {"id": "goal_9", "title": "g",
                                                  "status": "Open"})
                + ops("event_g9o", "event_g9", create("goal_9", "goal", status="Done")), 8,
                "[check 7, pairing]", "has status 'Done'"),
    "reused id": (line("event_g1", "task.finished", {"id": "t"}, "event_g2"), 7,
                  "[check 5, causation]", "event id event_g1 is used again"),
    "later cause": (line("event_f1", "task.finished", {"id": "t"}, "event_f2")
                    + line("event_f2", "run.started", {"id": "r"}), 7,
                    "[check 5, causation]", "names a later event (line 8)"),
    "unterminated": (line("event_u", "run.started", {"id": "r"})[:-1], 7,
                     "[check 1, envelope]", "last line has no terminating newline"),
}


@pytest.mark.parametrize("kind", sorted(BAD))
def test_a_bad_appended_line_is_refused_with_check_and_accepted_without(pair, kind):
    checked, plain, rogue = pair
    data, number, rule, why = BAD[kind]
    append(rogue, goal_pair(3) + data)
    bad = commit(rogue, kind)
    before = head_of(checked)
    lines = refused(push(rogue, f"file://{checked}", "main"))
    assert len(lines) == 1, lines
    assert "remote: git gasp: refused refs/heads/main: commit " in lines[0]
    assert f"commit {bad[:12]} {LOG}:{number}: {rule}" in lines[0] and why in lines[0], lines
    assert head_of(checked) == before
    assert push(rogue, "plain", "main").returncode == 0
    assert head_of(plain) == bad


def test_a_good_append_goes_in_and_the_next_push_resumes(pair):
    checked, _plain, rogue = pair
    append(rogue, goal_pair(3))
    good = commit(rogue, "three")
    assert push(rogue, "checked", "main").returncode == 0
    assert head_of(checked) == good
    states = sorted((checked / "gasp").glob("logstate-*.state"))
    assert states, "the state at the pushed log is saved"
    commit_four(rogue)
    assert push(rogue, "checked", "main").returncode == 0
    for state in (checked / "gasp").glob("logstate-*.state"):
        state.write_bytes(b"damaged")  # a damaged state is no state
    append(rogue, line("event_z", "goal.created", {"id": "goal_z", "title": "z"}))
    commit(rogue, "unpaired")
    lines = refused(push(rogue, "checked", "main"))
    assert len(lines) == 1 and "has no state.ops_applied pair" in lines[0], lines


def commit_four(rogue: Path) -> str:
    append(rogue, goal_pair(4))
    return commit(rogue, "four")


def test_old_bad_lines_in_history_do_not_refuse_a_good_push(pair, tmp_path):
    _checked, plain, rogue = pair
    append(rogue, BAD["causation"][0] + BAD["envelope"][0] + BAD["pairing"][0])
    commit(rogue, "history that predates the rules")
    assert push(rogue, "plain", "main").returncode == 0
    proc = gasp(plain, "install-hooks", "--server", "--check")
    assert proc.returncode == 0 and "saved the checks' state of 1 branch log" in out(proc)
    assert list((plain / "gasp").glob("logstate-*.state"))
    good = commit_four(rogue)
    proc = push(rogue, "plain", "main")
    assert proc.returncode == 0, proc.stderr
    assert head_of(plain) == good
    append(rogue, BAD["causation"][0].replace(b"event_c", b"event_d"))
    commit(rogue, "new bad")
    lines = refused(push(rogue, "plain", "main"))
    assert len(lines) == 1 and "event event_d" in lines[0], lines


def test_several_commits_name_the_one_that_appended_the_line(pair):
    checked, _plain, rogue = pair
    append(rogue, goal_pair(3))
    commit(rogue, "three")
    append(rogue, BAD["causation"][0])
    bad = commit(rogue, "bad")
    commit_four(rogue)
    lines = refused(push(rogue, "checked", "main"))
    assert len(lines) == 1 and f"commit {bad[:12]} {LOG}:7:" in lines[0], lines
    # a cause appended by a later commit of the same push still comes after its use
    git(rogue, "reset", "-q", "--hard", "checked/main")
    append(rogue, line("event_t", "task.finished", {"id": "t"}, "event_g2"))
    commit(rogue, "one")
    append(rogue, goal_pair(5))
    last = commit(rogue, "two")
    assert push(rogue, "checked", "main").returncode == 0
    assert head_of(checked) == last


def merge_commit(repo: Path, other: str, log: bytes, message: str) -> str:
    """A merge of HEAD and `other` whose log is `log` (what the merge driver writes)."""
    (repo / LOG).write_bytes(log)
    git(repo, "add", "-A")
    tree = git(repo, "write-tree").strip()
    sha = git(repo, "commit-tree", tree, "-p", "HEAD", "-p", other, "-m", message).strip()
    git(repo, "reset", "-q", "--hard", sha)
    return sha


def test_a_merge_keeps_the_remote_lines_after_the_pushers(pair, tmp_path):
    checked, _plain, rogue = pair
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(checked), str(other))
    fork = (rogue / LOG).read_bytes()
    remote_lines = goal_pair(7) + BAD["causation"][0]  # a bad line accepted before --check
    append(other, remote_lines)
    commit(other, "remote side")
    hook = checked / "hooks" / "pre-receive"
    script = hook.read_bytes()
    hook.write_bytes(script.replace(b"gasp_options='--check'", b"gasp_options=''"))
    assert push(other, "origin", "main").returncode == 0
    hook.write_bytes(script)
    git(rogue, "fetch", "-q", "checked")
    append(rogue, goal_pair(8))
    commit(rogue, "local side")
    merged = merge_commit(rogue, "checked/main", fork + goal_pair(8) + remote_lines, "merge")
    proc = push(rogue, "checked", "main")
    assert proc.returncode == 0, proc.stderr
    assert head_of(checked) == merged
    # a hostile merge: a local line takes the id of a remote line placed after it
    git(other, "pull", "-q", "--ff-only", "origin", "main")
    append(other, goal_pair(10))
    commit(other, "remote again")
    assert push(other, "origin", "main").returncode == 0
    git(rogue, "fetch", "-q", "checked")
    stolen = line("event_g10", "goal.created", {"id": "goal_x", "title": "x"}) + ops(
        "event_gxo", "event_g10", create("goal_x", "goal"))
    append(rogue, stolen)
    commit(rogue, "steal an id")
    log = (rogue / LOG).read_bytes() + goal_pair(10)
    merge_commit(rogue, "checked/main", log, "hostile merge")
    lines = refused(push(rogue, "checked", "main"))
    assert any("event id event_g10 is used again" in x for x in lines), lines
    assert head_of(checked) != git(rogue, "rev-parse", "HEAD").strip()


def test_a_new_claim_on_an_old_entity_is_refused(pair):
    checked, _plain, rogue = pair
    before = head_of(checked)
    append(rogue, ops("event_claim", "event_g1", create("goal_1", "goal", title="goal 1",
                                                         status="Open")))
    sha = commit(rogue, "second claim")
    lines = refused(push(rogue, "checked", "main"))
    assert len(lines) == 1 and "claimed by 2 ops events" in lines[0], lines
    assert f"commit {sha[:12]}" in lines[0] and "makes this old line fail" in lines[0]
    assert head_of(checked) == before


def test_a_moved_log_is_judged_where_the_manifest_puts_it(pair):
    checked, _plain, rogue = pair
    manifest = (rogue / "AGENT.md").read_text()
    (rogue / "AGENT.md").write_text(manifest.replace(
        "executor: .agent/config.toml", "executor: .agent/config.toml\n"
        "locations:\n  log: data/log.jsonl"))
    (rogue / "data").mkdir()
    git(rogue, "mv", LOG, "data/log.jsonl")
    append(rogue, goal_pair(3), "data/log.jsonl")
    commit(rogue, "move the log")
    assert push(rogue, "checked", "main").returncode == 0
    append(rogue, BAD["causation"][0], "data/log.jsonl")
    bad = commit(rogue, "bad")
    lines = refused(push(rogue, "checked", "main"))
    assert len(lines) == 1 and f"commit {bad[:12]} data/log.jsonl:7:" in lines[0], lines


def test_over_git_daemon_with_check(pair, tmp_path):
    checked, _plain, rogue = pair
    with git_daemon(tmp_path) as base:
        url = base + "checked.git"
        before = head_of(checked)
        append(rogue, BAD["pairing"][0])
        bad = commit(rogue, "bad pairing")
        lines = refused(push(rogue, url, "main"))
        assert len(lines) == 1 and bad[:12] in lines[0] and "[check 7, pairing]" in lines[0]
        assert head_of(checked) == before
        git(rogue, "reset", "-q", "--hard", before)
        good = commit_four(rogue)
        assert push(rogue, url, "main").returncode == 0
        assert head_of(checked) == good
