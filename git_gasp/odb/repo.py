"""Find the git work tree around an agent root: `open_repo` (a dulwich ``Repo``, any
layout), `open_plain` (the plain layouts: a `gitdirs.GitDirs`, without importing
``dulwich.repo``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from git_gasp.base.errors import GaspError, NotAGitRepo
from git_gasp.base.files import open_file
from git_gasp.base.gitdir import discover
from git_gasp.odb.gitdirs import GitDirs, LazyDiskStore, locate

if TYPE_CHECKING:  # dulwich loads when an object is read: 20 ms off the pre-commit guard
    from dulwich.object_store import BaseObjectStore
    from dulwich.repo import Repo

__all__ = ["BaseObjectStore", "LazyDiskStore", "Repo", "UnsupportedObjectFormat",
           "open_plain", "open_repo", "prefix_of", "require_sha1", "shallow_commits"]


def _not_a_repo(agent_root: str | os.PathLike) -> NotAGitRepo:
    return NotAGitRepo(f"{agent_root} is not inside a git work tree")


def open_repo(agent_root: str | os.PathLike) -> tuple[Repo, bytes]:
    """Open the git work tree enclosing `agent_root` (as `base.gitdir.discover` finds it,
    ``GIT_DIR`` and ``GIT_WORK_TREE`` honoured as a hook's git sets them).

    Returns ``(repo, prefix)``: `prefix` is the agent root relative to the work
    tree root, ``/``-separated bytes without a trailing slash (``b""`` at the
    root). Works with linked worktrees and ``.git`` files. Raises NotAGitRepo for
    a path outside any work tree (including bare repositories and ``.git`` dirs).
    """
    from dulwich.errors import NotGitRepository
    from dulwich.repo import Repo

    start = os.path.realpath(agent_root)
    found = discover(start, inherit_git_env=True) if os.path.isdir(start) else None
    if found is None or found.top is None:
        raise _not_a_repo(agent_root)
    try:
        repo = Repo(found.top, controldir=found.path, commondir=found.common,
                    worktree=found.top)
    except (NotGitRepository, OSError) as exc:
        raise _not_a_repo(agent_root) from exc
    top = os.path.realpath(repo.path)  # core.worktree may move it
    if repo.bare or Path(start).is_relative_to(found.path) or \
            not Path(start).is_relative_to(top):
        repo.close()
        raise _not_a_repo(agent_root)
    return repo, prefix_of(start, top)


def prefix_of(agent_root: str | os.PathLike, top: str) -> bytes:
    """`agent_root` relative to the work tree top `top`: ``/``-separated bytes without a
    trailing slash, ``b""`` at the top (both paths are compared resolved)."""
    rel = os.path.relpath(os.path.realpath(agent_root), os.path.realpath(top))
    return b"" if rel == os.curdir else os.fsencode(rel).replace(os.sep.encode(), b"/")


def shallow_commits(repo: Repo) -> set[bytes]:
    """Shallow-boundary commit ids, read from the common dir (so linked worktrees see them)."""
    found: set[bytes] = set()
    for basedir in {repo.controldir(), repo.commondir()}:
        f = repo.get_named_file("shallow", basedir=basedir)
        if f is None:
            continue
        with f:
            found.update(line.strip() for line in f if line.strip())
    return found


def open_plain(agent_root: str | os.PathLike) -> tuple[GitDirs, bytes] | None:
    """`open_repo` for the plain layouts (`odb.gitdirs.locate`) with a HEAD on a commit
    and sha1 objects, without importing ``dulwich.repo``; None: use `open_repo`."""
    dirs = locate(str(agent_root))
    if dirs is None:
        return None
    head = dirs.head()
    if not isinstance(head, bytes):  # unborn or not readable here: dulwich decides
        return None
    try:
        with open_file(os.path.join(dirs.commondir(), "config")) as f:
            if b"objectformat" in f.read().lower():  # sha256 objects: dulwich's reader
                return None
    except OSError:
        return None
    return dirs, prefix_of(agent_root, dirs.path)


def object_format(repo) -> bytes:
    """``sha1`` or ``sha256``: the object format of a dulwich ``Repo`` or `GitDirs`."""
    if isinstance(repo, GitDirs):
        repo = repo.dulwich()
    try:
        fmt = repo.get_config().get((b"extensions",), b"objectformat")
    except KeyError:
        fmt = b"sha1"
    return fmt.lower()


class UnsupportedObjectFormat(GaspError):
    """A repository whose objects git-gasp does not read (sha256)."""


def require_sha1(repo) -> None:
    """Refuse a repository of sha256 objects (`UnsupportedObjectFormat`, one line): the
    readers, saved indexes and short ids here are sha1's, and half a reading is worse
    than none."""
    fmt = object_format(repo)
    if fmt != b"sha1":
        raise UnsupportedObjectFormat(
            f"{repo.path}: the repository stores {fmt.decode(errors='replace')} objects "
            "(extensions.objectFormat); git-gasp reads sha1 repositories only "
            "(git init --object-format=sha1)")
