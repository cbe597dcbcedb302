"""Writing git objects and the index: a blob, a tree from path -> (mode, id), the index
entries of committed files, and what ``git gasp init`` needs (a repository found or
made, its files added and committed)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

from git_gasp.base.errors import GaspError, NotAGitRepo
from git_gasp.base.gitdir import discover
from git_gasp.odb.gitdirs import GitDirs
from git_gasp.odb.repo import require_sha1

if TYPE_CHECKING:  # dulwich's types: dulwich loads only where objects are read
    from git_gasp.odb.repo import BaseObjectStore


def add_blob(store: BaseObjectStore, data: bytes) -> bytes:
    """Store `data` as a blob; its id (hex)."""
    from dulwich.objects import Blob

    blob = Blob.from_string(data)
    store.add_object(blob)
    return blob.id


def write_tree(store: BaseObjectStore, files: dict[bytes, tuple[int, bytes]]) -> bytes:
    """Store the trees of `files` (full path -> (mode, blob id)); the root tree's id."""
    from dulwich.index import commit_tree

    return commit_tree(store, [(path, sha, mode) for path, (mode, sha) in files.items()])


def stage(repo: GitDirs, written: Iterable[tuple[bytes, bytes, int, os.stat_result]],
          removed: Iterable[bytes]) -> None:
    """Record in the index the files just committed ((path, blob id, mode, their
    lstat)) and drop `removed` paths from it."""
    from dulwich.index import index_entry_from_stat

    index = repo.open_index()
    for path, sha, mode, st in written:
        index[path] = index_entry_from_stat(st, sha, mode)
    for path in removed:
        if path in index:
            del index[path]
    index.write()


def discover_or_init(path: str) -> GitDirs:
    """The repository around `path` (`base.gitdir.discover`), or a new one made at
    `path`; a sha256 repository is refused (`repo.UnsupportedObjectFormat`) and a bare
    one or a git dir is not a work tree (NotAGitRepo), before anything is written."""
    found = discover(path)
    if found is None:
        from dulwich.repo import Repo

        made = Repo.init(path)
        return GitDirs(made.path, made.controldir(), made.commondir(), made)
    if found.top is None:
        raise NotAGitRepo(f"{path} is not inside a git work tree")
    repo = GitDirs(found.top, found.path, found.common)
    try:
        require_sha1(repo)
    except BaseException:
        repo.close()
        raise
    return repo


def head_tree(repo: GitDirs) -> bytes | None:
    """The tree of HEAD's commit; None on an unborn branch."""
    head = repo.head_commit()
    return None if head is None else repo.dulwich()[head].tree


def index_tree(repo: GitDirs) -> bytes | None:
    """The tree the index would commit; None when the index is empty."""
    index = repo.open_index()
    return index.commit(repo.object_store) if len(index) else None


def add_paths(repo: GitDirs, paths: list[str]) -> None:
    """``git add`` `paths` (absolute)."""
    from dulwich import porcelain

    porcelain.add(repo.dulwich(), paths=paths)


def commit_index(repo: GitDirs, message: bytes) -> bytes:
    """Commit the index without hooks; the commit id. GaspError when git's identity
    or dates cannot be read."""
    from dulwich import porcelain

    try:
        return porcelain.commit(repo.dulwich(), message=message, no_verify=True)
    except ValueError as exc:  # unreadable GIT_*_DATE, bad identity, ...
        raise GaspError(f"cannot commit: {exc}; nothing was changed") from None
