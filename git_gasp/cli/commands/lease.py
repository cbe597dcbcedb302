"""`git gasp lease status|release`: the single-writer lease."""

from __future__ import annotations

import click

from git_gasp.cli.options import CONTEXT, agent_root


@click.group(context_settings=CONTEXT)
def lease() -> None:
    """Show or release the single-writer lease (.agent/lease)."""


@lease.command("status", context_settings=CONTEXT)
def lease_status() -> None:
    """Who holds the lease, if anyone."""
    from git_gasp.store.lease import Lease

    rec = Lease(agent_root()).read()
    click.echo("no lease" if rec is None else
               f"{'expired' if rec.expired() else 'held'}: {rec.describe()}")


@lease.command("release", context_settings=CONTEXT)
@click.option("--force", is_flag=True, help="Remove another worker's (or a corrupt) lease.")
def lease_release(force: bool) -> None:
    """Give up this worker's lease."""
    from git_gasp.store.lease import Lease

    rec = Lease(agent_root()).release(force=force)
    click.echo("released" + (f" {rec.describe()}" if rec else " (no lease was held)"))
