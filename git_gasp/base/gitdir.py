"""Finding a work tree's git dir without starting git: the one finder.

`base.git.find_git_dir` and the agent hook (``adapters/agent_hook/entry.py``, which runs on
every agent step and imports only what enqueueing needs) both use `find_git_dir`, so
this module imports nothing beyond `base.fileops`.
"""

from __future__ import annotations

import os

from git_gasp.base.fileops import read_regular_file

GITDIR_PREFIX = "gitdir:"


def find_git_dir(start: str | os.PathLike) -> str | None:
    """The git dir of the work tree holding `start`, read as git finds it: the nearest
    ``.git`` at or above `start`, a directory, or a file ``gitdir: PATH`` (a linked
    worktree's or a submodule's, relative to the directory holding it); None when there
    is none or it cannot be read."""
    here = os.path.realpath(start)
    while True:
        dotgit = os.path.join(here, ".git")
        try:
            if os.path.isdir(dotgit):
                return dotgit
            if os.path.isfile(dotgit):
                data = read_regular_file(dotgit, limit=1 << 20)
                if data is None:
                    return None
                text = data.decode("utf-8", "replace").strip()
                if not text.startswith(GITDIR_PREFIX):
                    return None
                target = os.path.join(here, text[len(GITDIR_PREFIX):].strip())
                return target if os.path.isdir(target) else None
        except (OSError, ValueError):  # unreadable, or a path with NUL
            return None
        up = os.path.dirname(here)
        if up == here:
            return None
        here = up
