"""Finding a repository's git dir without starting git: the one finder, `discover`.

It answers as ``git rev-parse --absolute-git-dir`` and ``--git-common-dir`` do, from
`start`: ``GIT_DIR`` (and ``GIT_COMMON_DIR``, ``GIT_WORK_TREE``,
``GIT_CEILING_DIRECTORIES``) when the caller asks for this process's (a git
hook's); else walking up to the nearest directory holding a ``.git`` that is a git
dir, a ``.git`` file ``gitdir: PATH`` (a linked worktree's or a submodule's, relative
to the directory holding it) or a link to a git dir; else a directory that is itself a
git dir (a bare repository, or `start` inside a git dir). A git dir is what git takes
for one: a valid ``HEAD``, and ``objects/`` and ``refs/`` in its common dir (the one
its ``commondir`` file names). ``core.worktree`` and ``core.bare`` are config, read by
the callers that need a work tree (`odb.gitdirs`), not here.

Everything that needs a git dir asks this module (`base.git.git_dir` and `common_dir`
raise where it finds none); the agent hook (``adapters/agent_hook/entry.py``, on every agent
step) uses it too, so it imports nothing beyond `base.fileops`.
"""

from __future__ import annotations

import os

from git_gasp.base.fileops import read_regular_file

GITDIR_PREFIX = "gitdir:"
_HEX = frozenset(b"0123456789abcdef")


class GitDir:
    """Where a repository lives: `path`, the git dir (absolute, links resolved); `common`,
    the dir the worktrees share (objects, refs, config); `top`, the work tree's top as
    discovery found it (the directory holding ``.git``, or ``GIT_WORK_TREE``, or the
    start when ``GIT_DIR`` is set alone), None for a bare repository or a start inside
    the git dir."""

    __slots__ = ("common", "path", "top")

    def __init__(self, path: str, common: str, top: str | None) -> None:
        self.path, self.common, self.top = path, common, top

    def __repr__(self) -> str:
        return f"GitDir({self.path!r}, common={self.common!r}, top={self.top!r})"


def discover(start: str | os.PathLike, *, inherit_git_env: bool = False) -> GitDir | None:
    """The repository around `start` (see the module docstring); None when there is none
    or it cannot be read. `inherit_git_env`: honour this process's ``GIT_*`` variables
    (in a git hook), as `base.git.run` does when asked; by default none, as its scrubbed
    git does. A relative ``GIT_DIR`` or ``GIT_WORK_TREE`` is read from the current
    directory, which is the work tree's top when ``GIT_DIR`` is set alone, as for git
    started there; `start` is then not looked at (callers check it is in the work tree)."""
    env = os.environ if inherit_git_env else {}
    try:
        named = env.get("GIT_DIR")
        if named:
            path = _gitfile_target(os.path.abspath(named)) or named
            if not _is_git_dir(path, env):
                return None
            top: str | None = env.get("GIT_WORK_TREE") or os.getcwd()
        else:
            found = _walk_up(os.path.realpath(start), env)
            if found is None:
                return None
            path, top = found
            if top is not None and env.get("GIT_WORK_TREE"):
                top = env["GIT_WORK_TREE"]
        path = os.path.realpath(path)
        return GitDir(path, _common(path, env), None if top is None else os.path.realpath(top))
    except (OSError, ValueError):  # unreadable, or a path with NUL
        return None


def _walk_up(here: str, env: dict[str, str]) -> tuple[str, str | None] | None:
    """(git dir, top or None) of the nearest repository at or above `here`."""
    ceilings = {os.path.realpath(c) for c in env.get("GIT_CEILING_DIRECTORIES", "").split(":")
                if os.path.isabs(c)}
    first = True
    while True:
        if not first and here in ceilings:
            return None
        first = False
        dotgit = os.path.join(here, ".git")
        if os.path.isfile(dotgit):
            target = _gitfile_target(dotgit)
            if target is None or not _is_git_dir(target, env):
                return None  # git stops here too ("invalid gitfile format")
            return target, here
        if _is_git_dir(dotgit, env):
            return dotgit, here
        if _is_git_dir(here, env):
            return here, None
        up = os.path.dirname(here)
        if up == here:
            return None
        here = up


def _gitfile_target(path: str) -> str | None:
    """The git dir a ``.git`` file at `path` names (``gitdir: PATH``), None when `path` is
    not such a file."""
    if not os.path.isfile(path):
        return None
    data = read_regular_file(path, limit=1 << 20)
    if data is None:
        return None
    text = os.fsdecode(data).rstrip("\r\n")
    if not text.startswith(GITDIR_PREFIX):
        return None
    return os.path.join(os.path.dirname(path), text[len(GITDIR_PREFIX):].strip())


def _is_git_dir(path: str, env: dict[str, str]) -> bool:
    """True when git takes `path` for a git dir: a valid HEAD, and objects/ and refs/ in
    its common dir."""
    if not _valid_head(os.path.join(path, "HEAD")):
        return False
    common = _common(path, env)
    objects = env.get("GIT_OBJECT_DIRECTORY") or os.path.join(common, "objects")
    return os.path.isdir(objects) and os.path.isdir(os.path.join(common, "refs"))


def _valid_head(head: str) -> bool:
    """git's ``validate_headref``: a link to ``refs/…``, ``ref: refs/…`` or an object id."""
    if os.path.islink(head):
        return os.readlink(head).startswith("refs/")
    data = read_regular_file(head, limit=4096)
    if data is None:
        return False
    if data.startswith(b"ref:"):
        return data[4:].lstrip(b" \t").startswith(b"refs/")
    hexpart = data[:40]
    return len(hexpart) == 40 and set(hexpart) <= _HEX


def _common(path: str, env: dict[str, str]) -> str:
    """The common dir of git dir `path`: ``GIT_COMMON_DIR``, else its ``commondir``
    file's (relative to `path`), else `path` itself."""
    named = env.get("GIT_COMMON_DIR")
    if named:
        return os.path.realpath(named)
    data = read_regular_file(os.path.join(path, "commondir"), limit=1 << 16) \
        if os.path.isfile(os.path.join(path, "commondir")) else None
    if not data or not data.strip():
        return os.path.realpath(path)
    return os.path.realpath(os.path.join(path, os.fsdecode(data.strip())))


def find_git_dir(start: str | os.PathLike) -> str | None:
    """`discover`'s git dir for `start` (no ``GIT_*`` variable honoured), None when none."""
    found = discover(start)
    return None if found is None else found.path
