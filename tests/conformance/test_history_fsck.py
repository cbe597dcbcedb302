"""Check 4 on trees git fsck refuses: a commit whose tree holds two entries of one name
(git reads the first, a dict the last), a '.git' or '..' entry, an unsorted tree, fails
naming the commit and the refused entry's path, in the agent root or above it, packed
or loose, whichever reader parses the tree."""

from __future__ import annotations

import pathlib

import pytest

from git_gasp.conformance.history.check import check_history
from tests.conformance.test_history import append, ev, write
from tests.testing.run import commit_all, git
from tests.testing.trees import (
    TreeEntry,
    duplicate_before,
    edited_commit,
    write_blob,
)

LOG = "state/events.jsonl"


def _repo(tmp_path: pathlib.Path, prefix: str = "") -> pathlib.Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    write(root, prefix + LOG, ev(1) + ev(2) + ev(3))
    commit_all(root, "three events")
    append(root, prefix + LOG, ev(4))
    commit_all(root, "four")
    return root


def _move_head(root: pathlib.Path, sha: str) -> None:
    git(root, "update-ref", "HEAD", sha)  # the index cannot hold most of these trees


def _failures(root: pathlib.Path, agent: str = "", **kw) -> list:
    return check_history(root / agent if agent else root, use_cache=False, **kw).failures


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("use_packs", [True, False])  # our parser, dulwich's
def test_a_duplicate_log_entry_fails_naming_commit_and_path(tmp_path, packed, use_packs):
    root = _repo(tmp_path)
    shorter = write_blob(root, ev(1) + ev(2))  # git reads this one: two events dropped
    bad = edited_commit(root, "HEAD", "state", duplicate_before(b"events.jsonl", shorter))
    _move_head(root, bad)
    git(root, "checkout", "-q", "HEAD~1", "--", LOG)  # the work tree as HEAD~1 left it
    if packed:
        git(root, "repack", "-adq")
    found = [f for f in _failures(root, use_packs=use_packs) if f.commit == bad]
    assert len(found) == 1, found
    assert found[0].path == LOG, found
    assert "duplicateEntries" in found[0].message and "'events.jsonl'" in found[0].message


def _with(entry: TreeEntry):
    return lambda entries: sorted([*entries, entry], key=lambda e: e[1])


@pytest.mark.parametrize(("name", "msg_id"), [
    (b".git", "hasDotgit"), (b".GIT", "hasDotgit"), (b"..", "hasDotdot"),
    (b"a/b", "fullPathname"), (b"", "emptyName"),
])
def test_a_refused_name_fails_naming_it(tmp_path, name, msg_id):
    root = _repo(tmp_path)
    blob = bytes.fromhex(write_blob(root, b"x\n"))
    bad = edited_commit(root, "HEAD", "state", _with((b"100644", name, blob)))
    _move_head(root, bad)
    found = [f for f in _failures(root) if f.commit == bad]
    assert len(found) == 1 and msg_id in found[0].message, found
    assert found[0].path == "state/" + name.decode(), found


def test_an_unsorted_tree_above_the_agent_root_is_named_from_the_top(tmp_path):
    root = _repo(tmp_path, "agent/")
    blob = bytes.fromhex(write_blob(root, b"x\n"))
    bad = edited_commit(root, "HEAD", "", lambda entries: [*entries, (b"100644", b"a", blob)])
    _move_head(root, bad)
    found = [f for f in _failures(root, "agent") if f.commit == bad]
    assert len(found) == 1 and "treeNotSorted" in found[0].message, found
    assert found[0].path == "a", found
