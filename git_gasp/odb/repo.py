"""Find the git work tree around an agent root: `open_repo`, the one repository type
(`gitdirs.GitDirs`) for any layout, opened without ``dulwich.repo`` in the plain ones."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from git_gasp.base.errors import GaspError, NotAGitRepo
from git_gasp.base.files import open_file
from git_gasp.odb.gitdirs import GitDirs, LazyDiskStore, locate

if TYPE_CHECKING:  # dulwich loads when an object is read: 20 ms off the pre-commit guard
    from dulwich.object_store import BaseObjectStore

__all__ = ["BaseObjectStore", "GitDirs", "LazyDiskStore", "UnsupportedObjectFormat",
           "open_repo", "prefix_of", "require_sha1", "shallow_commits"]


def _not_a_repo(agent_root: str | os.PathLike) -> NotAGitRepo:
    return NotAGitRepo(f"{agent_root} is not inside a git work tree")


def open_repo(agent_root: str | os.PathLike) -> tuple[GitDirs, bytes]:
    """Open the git work tree enclosing `agent_root` (as `base.gitdir.discover` finds it,
    ``GIT_DIR`` and ``GIT_WORK_TREE`` honoured as a hook's git sets them; a work tree
    that config moves, where git says: `gitdirs.locate`).

    Returns ``(repo, prefix)``: `prefix` is the agent root relative to the work
    tree root, ``/``-separated bytes without a trailing slash (``b""`` at the
    root). Works with linked worktrees and ``.git`` files. Raises NotAGitRepo for
    a path outside any work tree (including bare repositories and ``.git`` dirs).
    """
    start = os.path.realpath(agent_root)
    if not os.path.isdir(start):
        raise _not_a_repo(agent_root)
    found = locate(start, any_env=True)
    if found is None:
        raise _not_a_repo(agent_root)
    return found, prefix_of(start, found.path)


def prefix_of(agent_root: str | os.PathLike, top: str) -> bytes:
    """`agent_root` relative to the work tree top `top`: ``/``-separated bytes without a
    trailing slash, ``b""`` at the top (both paths are compared resolved)."""
    rel = os.path.relpath(os.path.realpath(agent_root), os.path.realpath(top))
    return b"" if rel == os.curdir else os.fsencode(rel).replace(os.sep.encode(), b"/")


def shallow_commits(repo: GitDirs) -> set[bytes]:
    """Shallow-boundary commit ids, read from the common dir (so linked worktrees see them)."""
    found: set[bytes] = set()
    for basedir in {repo.controldir(), repo.commondir()}:
        f = repo.get_named_file("shallow", basedir=basedir)
        if f is None:
            continue
        with f:
            found.update(line.strip() for line in f if line.strip())
    return found


def object_format(repo: GitDirs) -> bytes:
    """``sha1`` or ``sha256``: the repository's object format (its config read by dulwich
    only when the word is in it: a sha1 repository's config never names it)."""
    try:
        with open_file(os.path.join(repo.commondir(), "config")) as f:
            if b"objectformat" not in f.read().lower():
                return b"sha1"
    except FileNotFoundError:
        return b"sha1"
    except OSError:  # not a regular file (a link, say): dulwich reads it as git would
        pass
    try:
        fmt = repo.dulwich().get_config().get((b"extensions",), b"objectformat")
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
