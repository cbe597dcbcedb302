"""`git gasp lease status|release`: the single-writer lease."""

from __future__ import annotations

import json

import click

from git_gasp.base.errors import GaspError
from git_gasp.cli.options import CONTEXT, agent_root
from git_gasp.runtime.state import AgentState
from git_gasp.store import holder
from git_gasp.store.lease import Lease, when


@click.group(context_settings=CONTEXT)
def lease() -> None:
    """Show or release the single-writer lease (.agent/lease)."""


def lease_json(rec) -> dict:
    """`lease status --json`: the lease and whether its holder runs (null: cannot tell)."""
    if rec is None:
        return {"held": False}
    verdict = rec.holder()
    return {"held": not rec.expired() and verdict.state != holder.DEAD,
            "worker_id": rec.worker_id, "pid": rec.pid, "host": rec.host,
            "alive": {holder.ALIVE: True, holder.DEAD: False}.get(verdict.state),
            "holder": verdict.why, "expires_at_ms": rec.expires_at_ms,
            "expires_at": when(rec.expires_at_ms), "expired": rec.expired()}


def status_line(rec) -> str:
    """`lease status`: who holds the lease, whether it runs, until when."""
    if rec is None:
        return "no lease"
    if rec.dead():
        return (f"stale: {rec.describe()}; the next writer takes it over "
                "(or `git gasp lease release`)")
    if rec.expired():
        return f"expired: {rec.describe()}; the next writer takes it over"
    return f"held: {rec.describe()}"


@lease.command("status", context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print the lease as a JSON object.")
def lease_status(as_json: bool) -> None:
    """Who holds the lease, whether that process still runs, until when."""
    rec = Lease(agent_root()).read()
    click.echo(json.dumps(lease_json(rec)) if as_json else status_line(rec))


def left_run(root) -> str:
    """What happened to the run a dead holder left: the next open resumes it."""
    try:
        state = AgentState.open(root, "git-gasp-lease-status")
    except GaspError:
        return ""
    if state.run is None:
        return "; it left no run open"
    return (f"; its unfinished run {state.run.run_id} stays open and the next writer resumes "
            f"it (close it with `git gasp run finish --outcome …`)")


@lease.command("release", context_settings=CONTEXT)
@click.option("--force", is_flag=True,
              help="Remove a live lease of another worker (or a corrupt one).")
def lease_release(force: bool) -> None:
    """Give up this worker's lease, or one that expired or whose holder is gone."""
    root = agent_root()
    mine = Lease(root)
    rec = mine.release(force=force)
    if rec is None:
        click.echo("released (no lease was held)")
    elif rec.worker_id != mine.worker_id and (rec.dead() or rec.expired()):
        click.echo(f"released the stale lease of {rec.describe()}{left_run(root)}")
    else:
        click.echo(f"released {rec.describe()}")
