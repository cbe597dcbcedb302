"""`git gasp fold`: fold the event log into the graph and show it."""

from __future__ import annotations

import json

import click

from git_gasp.cli.ids import EventId
from git_gasp.cli.shortids import ShortIds, abbrev_option
from git_gasp.protocol.logcount import LogCount, events_phrase
from git_gasp.protocol.summary import printable, summarize
from git_gasp.store.location import resolve_agent_root
from git_gasp.store.logview import fold_agent


@click.command()
@click.argument("path", required=False, type=click.Path())
@click.option("--at", "at", metavar="EVENT_ID", type=EventId(),
              help="Fold only through this event.")
@click.option("--json", "as_json", is_flag=True, help="Print the graph JSON.")
@click.option("--strict", is_flag=True, help="Fail on the first bad line or dangling op.")
@abbrev_option
def fold(path: str | None, at: str | None, as_json: bool, strict: bool,
         abbrev: int | None) -> int:
    """Fold the agent's state/events.jsonl (at PATH, default: here) into its graph; ids
    short, as log prints them (full in --json)."""
    root = resolve_agent_root(path)
    view = fold_agent(root, at=at, strict=strict)
    for note in view.notes:
        click.echo(printable(f"note: {note}"), err=True)
    if as_json:
        click.echo(json.dumps(view.result.graph.to_json(), ensure_ascii=False, sort_keys=True))
        return 0
    ids = _short_ids(root, view, at is not None, abbrev)
    count = fold_count(view)
    if count.last_id:
        where = f"{events_phrase(count.domain, count.ops)}, {count.last_phrase(ids.event)}"
    else:
        where = "0 events " + ("(no valid event)" if view.repo.log_bytes else "(empty log)")
    seeded = f", seeded from {view.seeded_from}" if view.seeded_from else ""
    click.echo(printable(f"{view.repo.log_rel}: {where}{seeded}"))
    # escaped: no control character reaches the terminal
    for line in summarize(view.result, ids.node, ids.event):
        click.echo(line)
    return 0


def fold_count(view) -> LogCount:
    """The count of the events `view` folded (through its last line) and its nodes."""
    upto = view.upto_line
    return LogCount((e for e in view.repo.parsed.events if e.line <= upto),
                    len(view.result.graph.nodes))


def _short_ids(root, view, partial: bool, abbrev: int | None) -> ShortIds:
    """Short ids among every event of the log and every node of its whole fold (a
    fold `--at` an event holds fewer), so each one printed names one id of the log."""
    nodes = set(view.result.graph.nodes)
    if partial:  # folded through an event: the whole fold may hold more nodes
        nodes.update(fold_agent(root).result.graph.nodes)
    return ShortIds(nodes, [e.id for e in view.repo.parsed.events], abbrev)
