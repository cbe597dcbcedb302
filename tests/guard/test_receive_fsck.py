"""A push of a tree git fsck refuses: a ``state`` tree holding two entries named
``events.jsonl`` (git reads the first, a log with events dropped; a reader keeping the
last reads the old log) is refused by pre-receive ``--check`` naming the commit and the
path, and check 4 in a clone holding such a commit fails naming it too; the commit
guard refuses to commit on a HEAD whose tree is one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.guard.test_receive import head_of, push, refused
from tests.guard.test_receive_check import bare
from tests.testing.events import goal_pair
from tests.testing.run import gasp, git, out
from tests.testing.trees import duplicate_before, edited_commit, write_blob

pytestmark = pytest.mark.slow  # real pushes

LOG = "state/events.jsonl"


def erasing_commit(repo: Path) -> tuple[str, int]:
    """A commit on HEAD whose state tree has a first ``events.jsonl`` holding the log
    without its last two lines, then the log as it was; (its id, the lines git reads)."""
    lines = (repo / LOG).read_bytes().splitlines(keepends=True)
    shorter = write_blob(repo, b"".join(lines[:-2]))
    sha = edited_commit(repo, "HEAD", "state", duplicate_before(b"events.jsonl", shorter),
                        "drop two events")
    return sha, len(lines) - 2


@pytest.fixture
def served(agent, tmp_path):
    """(a bare remote with pre-receive --check holding two goals, a clone of it)."""
    remote = bare(tmp_path, "checked.git", "--check")
    with open(agent / LOG, "ab") as fh:
        fh.write(goal_pair(1) + goal_pair(2))
    git(agent, "add", "-A")
    git(agent, "commit", "-q", "-m", "two goals")
    assert push(agent, str(remote), "main").returncode == 0
    rogue = tmp_path / "rogue"
    git(tmp_path, "clone", "-q", str(remote), str(rogue))
    return remote, rogue


def test_a_push_of_a_duplicate_entry_is_refused_naming_commit_and_path(served):
    remote, rogue = served
    before = head_of(remote)
    bad, kept = erasing_commit(rogue)
    assert len(git(rogue, "show", f"{bad}:{LOG}").splitlines()) == kept  # git's reading
    lines = refused(push(rogue, "origin", f"{bad}:refs/heads/main"))
    assert len(lines) == 1, lines
    assert f"commit {bad[:12]} {LOG}: tree " in lines[0], lines
    assert "duplicateEntries" in lines[0] and "'events.jsonl'" in lines[0], lines
    assert head_of(remote) == before


def test_check_4_fails_on_a_clone_holding_such_a_commit(served, tmp_path):
    remote, rogue = served
    bad, _kept = erasing_commit(rogue)
    git(remote, "update-ref", "refs/heads/main", bad, check=False)  # past no hook
    git(rogue, "fetch", "-q", "origin")
    git(rogue, "reset", "-q", "--soft", bad)  # HEAD at it, the work tree as it was
    proc = gasp(rogue, "check", "--no-cache")
    text = out(proc)
    assert proc.returncode != 0, text
    assert bad[:12] in text and LOG in text and "duplicateEntries" in text, text


def test_the_guard_refuses_to_commit_on_such_a_head(served):
    _remote, rogue = served
    bad, _kept = erasing_commit(rogue)
    git(rogue, "update-ref", "refs/heads/main", bad)
    git(rogue, "read-tree", "HEAD")  # git's index keeps one of the two: the last
    with open(rogue / LOG, "ab") as fh:
        fh.write(goal_pair(3))
    git(rogue, "add", LOG)
    proc = gasp(rogue, "hook", "pre-commit")
    text = out(proc)
    assert proc.returncode != 0, text
    assert bad[:12] in text and LOG in text and "duplicateEntries" in text, text
