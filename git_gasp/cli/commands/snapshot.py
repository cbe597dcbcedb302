"""`git gasp snapshot`: write snapshots/<event-id>/graph.json with its integrity record."""

from __future__ import annotations

import click

from git_gasp.base.errors import GaspError
from git_gasp.cli.ids import EventId
from git_gasp.cli.options import WaitCommand, wait_option
from git_gasp.protocol.snapshot import SnapshotError
from git_gasp.protocol.summary import printable
from git_gasp.store.lease import Lease, default_worker_id
from git_gasp.store.lease_wait import take
from git_gasp.store.location import resolve_agent_root
from git_gasp.store.logview import fold_agent
from git_gasp.store.snapshots import write_snapshot


@click.command(cls=WaitCommand)
@click.argument("path", required=False, type=click.Path())
@click.option("--at", "at", metavar="EVENT_ID", type=EventId(),
              help="Snapshot through this event (default: last).")
@wait_option
def snapshot(path: str | None, at: str | None, wait: float | None) -> int:
    """Materialize the fold of the log (at PATH, default: here) as a snapshot."""
    root = resolve_agent_root(path)
    lease = Lease(root, default_worker_id())
    take(lease, wait)  # no writer appends or snapshots beside it
    try:
        return _write(root, at)
    finally:
        lease.settle()


def _write(root, at: str | None) -> int:
    """Fold the log at `root` (through `at`) and write its snapshot (the lease held)."""
    view = fold_agent(root, at=at, strict=False, use_snapshots=False)  # from the log itself
    # Without --at the snapshot stands for the whole log: any bad line refuses it, rather
    # than silently snapshotting the valid prefix before a broken or torn last line.
    bad = [e for e in view.repo.parsed.errors if at is None or e.line <= view.upto_line]
    if bad:
        raise GaspError(f"{view.repo.log_rel}:{bad[0].line}: {bad[0].message}; "
                        "a snapshot must cover only valid events")
    if view.last_event_id is None:
        raise GaspError(f"{view.repo.log_rel} has no events to snapshot")
    for skip in view.result.skipped:
        click.echo(printable(f"warning: skipped {skip.describe()}"), err=True)
    try:
        rel, created = write_snapshot(root, view.repo.log_bytes or b"", view.result.graph,
                                      view.upto_line, view.last_event_id)
    except SnapshotError as exc:
        raise GaspError(str(exc)) from None
    click.echo(f"{'wrote' if created else 'unchanged'} {rel} "
               f"({len(view.result.graph.nodes)} nodes, line {view.upto_line})")
    return 0
