"""A clone joins the project's agent history: where a remote has the state branch
(``refs/remotes/REMOTE/gasp/state``), `init --branch` attaches to it instead of making
a second agent, and the "not an agent repository" line says so."""

from __future__ import annotations

import os

from git_gasp.base import git
from git_gasp.base.errors import GaspError

DEFAULT_BRANCH = "gasp/state"
REMOTE_KEY = "gasp.remote"


def configured_remote(start: str | os.PathLike) -> str | None:
    """The remote ``gasp.remote`` names (the state branch is shared there only: `sync`
    never falls back to origin), or None."""
    return git.config_get(start, REMOTE_KEY) or None


def remote_state_branch(start: str | os.PathLike, branch: str = DEFAULT_BRANCH
                        ) -> str | None:
    """``REMOTE/BRANCH`` of the remote-tracking branch a remote of the repository around
    `start` has for the state branch (``gasp.remote`` when configured, else ``origin``,
    else the first in name order); None when none has it or outside a repository."""
    try:
        proc = git.run(start, "for-each-ref", "--format=%(refname)", "refs/remotes/",
                       check=False)
    except (GaspError, OSError, ValueError):
        return None
    if proc.returncode != 0:
        return None
    suffix = "/" + branch
    found = sorted(name[len("refs/remotes/"):-len(suffix)]
                   for name in os.fsdecode(proc.stdout).splitlines()
                   if name.endswith(suffix) and name.count("/") >= 3)
    if not found:
        return None
    preferred = configured_remote(start)
    if preferred is not None:
        return f"{preferred}/{branch}" if preferred in found else None
    remote = "origin" if "origin" in found else found[0]
    return f"{remote}/{branch}"
