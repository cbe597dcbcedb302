"""The cached re-check after one new commit of a big log (the working file holding
HEAD's blob, the parent's blob packed): passes without inflating either log blob, and
still names the commit of an edited line, or the working file edited after the commit,
whether the commit went through the guard or past it (--no-verify)."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_gasp.conformance.runner import check_repo
from git_gasp.odb.objects import Objects
from tests.testing.events import goal_pair
from tests.testing.run import git

pytestmark = pytest.mark.slow  # real git, several commits and checks per test

LOG = "state/events.jsonl"
PAIRS = 400  # ~150 KB: above the size where the working file is read instead of the blob


def _log(root: Path) -> Path:
    return root / LOG


def _commit(root: Path, guarded: bool, message: str = "more") -> str:
    git(root, "add", LOG)
    git(root, "commit", "-q", *([] if guarded else ["--no-verify"]), "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


def _failures(root: Path) -> dict[int, list]:
    report = check_repo(root)
    return {c.number: c.failures for c in report.checks if c.failures}


@pytest.fixture
def big(agent: Path) -> Path:
    """The agent with a ~150 KB log over two commits, packed, checked once (cache warm)."""
    with _log(agent).open("ab") as fh:
        fh.write(b"".join(goal_pair(n) for n in range(PAIRS // 2)))
    _commit(agent, False, "first half")
    with _log(agent).open("ab") as fh:
        fh.write(b"".join(goal_pair(n) for n in range(PAIRS // 2, PAIRS)))
    _commit(agent, False, "second half")
    git(agent, "repack", "-adq")
    assert _failures(agent) == {}
    return agent


@pytest.fixture
def reads(monkeypatch) -> list[bytes]:
    """The blob ids check 4 inflates from the object store."""
    seen: list[bytes] = []
    original = Objects.blob

    def blob(self, sha: bytes) -> bytes:
        seen.append(sha)
        return original(self, sha)

    monkeypatch.setattr(Objects, "blob", blob)
    return seen


def _blob_id(root: Path, rev: str) -> bytes:
    return git(root, "rev-parse", f"{rev}:{LOG}").strip().encode()


@pytest.mark.parametrize("guarded", [False, True], ids=["no-verify", "guarded"])
def test_an_append_rechecks_without_inflating_the_log(big, reads, guarded):
    with _log(big).open("ab") as fh:
        fh.write(goal_pair(PAIRS))
    _commit(big, guarded)
    assert _failures(big) == {}
    logs = {_blob_id(big, "HEAD"), _blob_id(big, "HEAD~1")}
    assert not logs & set(reads)


@pytest.mark.parametrize("guarded", [False, True], ids=["no-verify", "guarded"])
def test_a_working_file_edited_after_the_commit_fails(big, guarded):
    with _log(big).open("ab") as fh:
        fh.write(goal_pair(PAIRS))
    _commit(big, guarded)
    data = bytearray(_log(big).read_bytes())
    middle = data.index(b"goal 100")
    data[middle:middle + 8] = b"goal 1X0"  # same size
    _log(big).write_bytes(bytes(data))
    found = _failures(big)
    assert set(found) == {4}, found
    (failure,) = found[4]
    assert failure.path == LOG and failure.commit is None
    assert failure.line == data[:middle].count(b"\n") + 1


def test_a_commit_editing_a_middle_line_fails_naming_it(big):
    data = bytearray(_log(big).read_bytes())
    middle = data.index(b"goal 100")
    data[middle:middle + 8] = b"goal 1X0"
    _log(big).write_bytes(bytes(data) + goal_pair(PAIRS))
    sha = _commit(big, False, "rewrites a line")
    found = _failures(big)
    assert 4 in found, found
    assert [(f.commit, f.path, f.line) for f in found[4]] == [
        (sha, LOG, data[:middle].count(b"\n") + 1)]


def test_a_commit_dropping_the_last_line_fails_naming_it(big):
    data = _log(big).read_bytes()
    cut = data.rstrip(b"\n").rfind(b"\n") + 1
    _log(big).write_bytes(data[:cut])
    sha = _commit(big, False, "drops a line")
    found = _failures(big)
    assert [f.commit for f in found.get(4, [])] == [sha], found


def test_an_append_is_proven_from_the_working_file_in_pieces(big, monkeypatch):
    from git_gasp.conformance.history.worktree import WorkTree

    whole: list[bytes] = []
    original = WorkTree.head_blob

    def head_blob(self, walker, path, entry):
        whole.append(path)
        return original(self, walker, path, entry)

    monkeypatch.setattr(WorkTree, "head_blob", head_blob)
    with _log(big).open("ab") as fh:
        fh.write(goal_pair(PAIRS))
    _commit(big, False)
    assert _failures(big) == {}
    assert whole == []  # the working file was never read whole


def test_extending_an_unterminated_last_line_fails_naming_the_commit(big):
    with _log(big).open("ab") as fh:
        fh.write(b'{"id":"event_partial"')
    _commit(big, False, "an unterminated line")
    check_repo(big)  # check 4 passes (an append); the log checks see the partial line
    with _log(big).open("ab") as fh:
        fh.write(b',"more":1}\n')
    sha = _commit(big, False, "extends it")
    found = _failures(big)
    assert [f.commit for f in found.get(4, [])] == [sha], found
