"""Writing git objects and the index: a blob, a tree from path -> (mode, id), the index
entries of committed files, and what ``git gasp init`` needs (a repository found or
made, its files added and committed)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

from git_gasp.base.errors import GaspError
from git_gasp.odb.repo import require_sha1

if TYPE_CHECKING:  # dulwich's types: dulwich loads only where objects are read
    from git_gasp.odb.repo import BaseObjectStore, Repo


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


def stage(repo: Repo, written: Iterable[tuple[bytes, bytes, int, os.stat_result]],
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


def discover_or_init(path: str) -> Repo:
    """The repository around `path`, or a new one made at `path`; a sha256 repository
    is refused (`repo.UnsupportedObjectFormat`) before anything is written."""
    from dulwich.errors import NotGitRepository
    from dulwich.repo import Repo

    try:
        repo = Repo.discover(path)
    except NotGitRepository:
        return Repo.init(path)
    try:
        require_sha1(repo)
    except BaseException:
        repo.close()
        raise
    return repo


def head_tree(repo: Repo) -> bytes | None:
    """The tree of HEAD's commit; None on an unborn branch."""
    try:
        return repo[repo.head()].tree
    except KeyError:
        return None


def index_tree(repo: Repo) -> bytes | None:
    """The tree the index would commit; None when the index is empty."""
    index = repo.open_index()
    return index.commit(repo.object_store) if len(index) else None


def add_paths(repo: Repo, paths: list[str]) -> None:
    """``git add`` `paths` (absolute)."""
    from dulwich import porcelain

    porcelain.add(repo, paths=paths)


def commit_index(repo: Repo, message: bytes) -> bytes:
    """Commit the index without hooks; the commit id. GaspError when git's identity
    or dates cannot be read."""
    from dulwich import porcelain

    try:
        return porcelain.commit(repo, message=message, no_verify=True)
    except ValueError as exc:  # unreadable GIT_*_DATE, bad identity, ...
        raise GaspError(f"cannot commit: {exc}; nothing was changed") from None
