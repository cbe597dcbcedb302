"""The state branch's worktree is only a checkout: recreated from the branch when it is
gone, and driven by git without the project's own git hooks (`base.git.NO_HOOKS`)."""

from __future__ import annotations

import os

from git_gasp.base import git
from git_gasp.base.errors import GaspError


def recreate(common: str, path: str, branch: str) -> None:
    """Check the state `branch` out again at `path` (a linked worktree of the repository
    whose git common dir is `common`, as `init --branch` made it), after git forgets the
    old registration. A branch that is gone too is left for the caller's "holds no GASP
    manifest" line."""
    top = common
    there = (f"--git-dir={common}",)
    ref = f"refs/heads/{branch}"
    if not git.ok(top, *there, "rev-parse", "--verify", "-q", ref):
        return
    git.run(top, *there, *git.NO_HOOKS, "worktree", "prune", check=False)
    proc = git.run(top, *there, *git.NO_HOOKS, "worktree", "add", "-q", path, branch,
                   check=False)
    if proc.returncode != 0 and not os.path.exists(path):
        raise GaspError(f"the state branch's worktree {path} is gone and cannot be "
                        f"checked out again: {proc.stderr.decode(errors='replace').strip()}")
