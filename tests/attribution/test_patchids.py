"""Patch ids (`attribution.patchids`): the same for a commit and its copy on moved
lines, none for a commit that changes no line, cached per commit, and an unreadable
cache computed afresh; the added lines they are read beside (`diffranges`)."""

from __future__ import annotations

from pathlib import Path

from git_gasp.attribution.diffranges import diff_commits, parse_added_lines, parse_diffs
from git_gasp.attribution.patchids import CACHE, HEADER, patch_ids
from tests.testing.blame_history import write
from tests.testing.run import commit_all, git


def _repo(tmp_path: Path) -> tuple[Path, str, str, str]:
    """A change, its cherry-pick onto lines that moved and changed next to it, and an
    empty commit."""
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    write(repo, "f", b"".join(b"%d\n" % i for i in range(1, 21)))
    commit_all(repo, "base")
    git(repo, "checkout", "-q", "-b", "side")
    write(repo, "f", (repo / "f").read_bytes().replace(b"10\n", b"ten\n"))
    change = commit_all(repo, "ten")
    git(repo, "checkout", "-q", "-")
    write(repo, "f", b"0\n" + (repo / "f").read_bytes().replace(b"\n8\n", b"\neight\n"))
    commit_all(repo, "moved")
    git(repo, "cherry-pick", change)
    copy = git(repo, "rev-parse", "HEAD").strip()
    empty = commit_all(repo, "nothing")
    return repo, change, copy, empty


def test_a_copy_on_moved_lines_keeps_its_id_and_an_empty_commit_has_none(tmp_path):
    repo, change, copy, empty = _repo(tmp_path)
    ids = patch_ids(str(repo), [change, copy, empty])
    assert ids[change] and ids[change] == ids[copy] and ids[empty] is None
    cache = repo / ".git" / CACHE
    assert cache.read_bytes().startswith(HEADER) and change.encode() in cache.read_bytes()
    # from the cache, the same; a cache that is not ours is computed afresh
    assert patch_ids(str(repo), [copy, change, empty]) == ids
    cache.write_bytes(b"garbage\n" + copy.encode() + b" 0000\n")
    assert patch_ids(str(repo), [change, copy]) == {change: ids[change], copy: ids[copy]}


def test_added_lines_are_numbered_as_in_their_commit(tmp_path):
    repo, change, copy, _ = _repo(tmp_path)
    data = diff_commits(str(repo), [change, copy])
    assert parse_added_lines(data) == {change: {b"f": [(10, b"ten")]},
                                       copy: {b"f": [(11, b"ten")]}}
    assert parse_diffs(data) == {change: {b"f": [(10, 10)]}, copy: {b"f": [(11, 11)]}}
