"""Where the agent's state lives: at or above the current directory (the agent
repository *is* the project, or a folder of it), or where the project's own git config
points (`gasp.state`: the linked worktree of the state branch `init --branch` made, or a
state directory elsewhere).

git config is never cloned, so a `gasp.state` can only have been written on this
machine, by `git gasp init --branch` (or by the user); it is read without running git
(`odb.gitdirs.local_config_value`), as every command and the agent hook ask it.
"""

from __future__ import annotations

import os
from pathlib import Path

from git_gasp.base.errors import GaspError, UsageError
from git_gasp.odb.gitdirs import local_config_value, locate

MANIFEST = "AGENT.md"
SECTION, KEY = "gasp", "state"  # gasp.state: the state's directory
BRANCH_KEY = "stateBranch"  # gasp.stateBranch: its branch, when init --branch made it


def root_above(start: str, *, with_log: bool = False) -> str | None:
    """The nearest directory at or above `start` holding AGENT.md (`with_log`: and the
    default log beside it), up to the git work tree's top (or the filesystem's root
    outside one); None if there is none."""
    for candidate in (start, *[str(p) for p in Path(start).parents]):
        if Path(candidate, MANIFEST).is_file() and (
                not with_log or Path(candidate, "state", "events.jsonl").exists()):
            return candidate
        if Path(candidate, ".git").exists():
            return None
    return None


def configured_root(start: str) -> str | None:
    """The state directory the repository around `start` names in `gasp.state` (a path
    relative to the git common dir, or absolute), if it holds AGENT.md."""
    try:
        value = local_config_value(start, SECTION, None, KEY)
        if not value:
            return None
        dirs = locate(start)
        base = dirs.commondir() if dirs is not None else start
        root = os.path.normpath(os.path.join(base, os.fsdecode(value)))
    except (OSError, ValueError):
        return None
    return root if Path(root, MANIFEST).is_file() else None


def find_root(start: str | os.PathLike) -> str | None:
    """The agent root for a command started in `start`: an agent repository at or above
    it (AGENT.md with its log), else the state directory its repository's config names,
    else any AGENT.md at or above; None when there is none. An AGENT.md without a log may
    be a project's own agent instructions, so a configured state wins over it (and the
    common case, the agent repository itself, is decided without reading the config)."""
    here = str(Path(start))
    return root_above(here, with_log=True) or configured_root(here) or root_above(here)


class NotAnAgentRepository(GaspError):
    """A command that needs an agent's state ran where there is none (exit 2, as git
    exits outside a repository)."""

    exit_code = 2


def not_an_agent_repository(where: str, *, above: bool = True) -> NotAnAgentRepository:
    """The one error every command gives where there is no agent's state."""
    place = f"no {MANIFEST} in {where}" + (" or above, and this repository's config "
                                           "names no state" if above else "")
    return NotAnAgentRepository(f"not an agent repository: {place}; run `git gasp init` "
                                "(or `git gasp init --branch` in a project's repository)")


def require_root(start: str | os.PathLike) -> str:
    """`find_root`, or `not_an_agent_repository` when there is no state to act on."""
    root = find_root(start)
    if root is None:
        raise not_an_agent_repository(str(Path(start)))
    return root


def find_agent_root(path: str | None) -> str:
    """The agent root for PATH; without PATH, the nearest directory up holding AGENT.md,
    else the state directory the repository's config names (`store.location`).

    The upward search stops at the git work-tree root. A PATH that holds AGENT.md or
    the log is the root; another PATH is searched up from as the current directory is.
    No agent found is the one "not an agent repository" error (`store.location`, exit
    2); a missing manifest of a directory that holds a log is check 6's to report. A
    str as `str()` of a pathlib.Path shows it.
    """
    if path is not None:
        root = str(Path(path))
        if not Path(root).exists():
            raise UsageError(f"{path}: no such directory")
        if not Path(root).is_dir():
            raise UsageError(f"{path}: not a directory")
        if _agent_like(root):
            return root
        found = find_root(str(Path(os.path.abspath(root))))  # inside an agent: that agent
        if found is None:
            raise not_an_agent_repository(path)
        return found
    cwd = str(Path(os.getcwd()))
    return cwd if find_root(cwd) is None and _agent_like(cwd) else require_root(cwd)


def _agent_like(root: str) -> bool:
    return Path(root, MANIFEST).exists() or Path(root, "state", "events.jsonl").exists()


def resolve_agent_root(path: str | None) -> Path:
    """`find_agent_root` as a pathlib.Path."""
    return Path(find_agent_root(path))
