"""`git gasp fork`: a branch holding the log through an event."""

from __future__ import annotations

import click

from git_gasp.cli.ids import EventId
from git_gasp.cli.options import CONTEXT, agent_root
from git_gasp.runtime.fork import fork as do_fork
from git_gasp.runtime.identity import declared_identity_hash


@click.command("fork", context_settings=CONTEXT)
@click.argument("name")
@click.option("--at", metavar="EVENT_ID", type=EventId(),
              help="Fork after this event (default: the last).")
def fork(name: str, at: str | None) -> None:
    """Create branch NAME holding the log through --at (plus a fork marker)."""
    root = agent_root()
    manifest, _ = declared_identity_hash(root)
    sha = do_fork(root, name, at, actor=("agent", manifest.agent_id))
    click.echo(f"{name} {sha.decode()}")
    click.echo(f"switch to it with: git switch {name}", err=True)
