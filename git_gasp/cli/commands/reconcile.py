"""`git gasp adapt claude-code|codex reconcile`: close runs whose session ended unseen."""

from __future__ import annotations

from pathlib import Path

import click

from git_gasp.adapters.live import LOCK_WAIT_S, drain_pending, find_agent_root
from git_gasp.adapters.reconcile import reconcile as run
from git_gasp.base.errors import GaspError


def reconcile_command(agent: str) -> click.Command:
    """The `reconcile` subcommand of `adapt <agent>`."""

    @click.command("reconcile")
    @click.option("--repo", "repo", type=click.Path(file_okay=False, path_type=Path),
                  default=".", show_default=True, help="The agent repo the hooks record into.")
    def reconcile(repo: Path) -> None:
        """Close the runs of sessions that ended without SessionEnd (killed, or an agent
        that sends none): outcome abandoned, or what the transcript shows."""
        root = find_agent_root(repo)
        if root is None:
            raise GaspError(f"{repo} is not inside an agent repo (no AGENT.md)")
        drain_pending(repo, lock_wait_s=LOCK_WAIT_S)  # queued here (a state beside it too)
        notes = run(root, agent)
        for note in notes:
            click.echo(f"closed {note}")
        if not notes:
            click.echo(f"no open {agent} run to close")

    return reconcile
