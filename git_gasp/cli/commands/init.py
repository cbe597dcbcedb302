"""`git gasp init`: create a conformant agent repo (Part I layout) with a first commit,
at PATH or, with --branch, on its own branch beside an existing project. With --branch
(new, joined or attached again) it then records the hook payloads held in the
project's git dir while it had no state (``adapters/agent_hook/held.py``)."""

from __future__ import annotations

from pathlib import Path

import click

from git_gasp.adapters.live import LOCK_WAIT_S, drain_pending
from git_gasp.base.errors import UsageError
from git_gasp.githooks.install import install_for_init
from git_gasp.store.joining import remote_state_branch
from git_gasp.store.layout import init_agent
from git_gasp.store.statebranch import init_branch, point_here, reattach_branch

DEFAULT_BRANCH = "gasp/state"  # store.statebranch.DEFAULT_BRANCH (a test keeps them equal)


@click.command()
@click.argument("path", required=False, type=click.Path())
@click.option("--agent-id", metavar="ID", help="The agent's id (default: the directory name).")
@click.option("--branch", metavar="NAME", is_flag=False, flag_value=DEFAULT_BRANCH,
              default=None,
              help=f"Keep the state on its own orphan branch (default {DEFAULT_BRANCH}) of "
                   "the repository at PATH, in a linked worktree; the working branch gets "
                   "no commit and no file. Where a remote has that branch (a clone of a "
                   "project that records), join it instead: a local branch tracking it.")
@click.option("--worktree", metavar="DIR", type=click.Path(),
              help="With --branch: where the state's worktree goes (default: under the "
                   "git dir).")
def init(path: str | None, agent_id: str | None, branch: str | None,
         worktree: str | None) -> int:
    """Create the GASP layout at PATH (default: here) and commit it."""
    root = Path(path or ".")
    if branch is not None:
        return _init_branch(root, branch, Path(worktree) if worktree else None, agent_id)
    if worktree is not None:
        raise UsageError("--worktree goes with --branch")
    agent, commit = init_agent(root, agent_id, install_hooks=install_for_init)
    click.echo(f"initialised agent {agent} in {root} (commit {commit.decode()[:12]})")
    named = point_here(root)
    if named:
        click.echo(named)
    _next()
    return 0


def _init_branch(project, branch: str, worktree, agent_id: str | None) -> int:
    again = reattach_branch(project, branch, worktree) if agent_id is None else None
    if again is not None:  # the project's own state branch, left by `git gasp uninstall`
        click.echo(f"attached again to agent {again[0]}: branch {branch}, checked out in "
                   f"{again[1]}")
        _record_held(project)
        return 0
    remote = remote_state_branch(project, branch)
    if remote is not None:
        return _join(project, remote, branch, worktree, agent_id)
    agent, commit, where = init_branch(project, branch, worktree, agent_id)
    click.echo(f"initialised agent {agent} on branch {branch} (commit {commit.decode()[:12]}), "
               f"checked out in {where}")
    click.echo("every git gasp command run in this project now reads and writes that "
               "state; your working branch gets no commit and no file")
    _record_held(project)
    _next()
    return 0


def _join(project, remote: str, branch: str, worktree, agent_id: str | None) -> int:
    """A clone whose remote has the state branch joins it: never a second agent."""
    from git_gasp.base.errors import UsageError
    from git_gasp.store.statebranch import join_branch

    if agent_id is not None:
        raise UsageError(f"--agent-id: {remote} already holds this project's agent; "
                         "init --branch joins it (git gasp restore URL --branch makes a "
                         "standalone copy)")
    agent, where = join_branch(project, remote, branch, worktree)
    click.echo(f"joined agent {agent}: branch {branch} tracks {remote}, checked out in "
               f"{where}")
    click.echo("every git gasp command run in this project now reads and writes that "
               "state; git gasp sync shares it; your working branch gets no commit and "
               "no file")
    _record_held(project)
    return 0


def _record_held(project: Path) -> None:
    """Record the agent sessions whose hooks ran before the project had a state (held,
    redacted, in its git dir), now that it has one."""
    recorded = drain_pending(project, lock_wait_s=LOCK_WAIT_S).recorded
    if recorded:
        click.echo(f"recorded {recorded} hook event(s) held while the project had no state")


def _next() -> None:
    click.echo("next: write who the agent is in identity/IDENTITY.md, then run "
               "`git gasp identity amend --approved-by NAME --reason TEXT` (one commit: "
               "the edit, the new identity_hash in AGENT.md, the approving decision)")
