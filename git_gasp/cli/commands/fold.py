"""`git gasp fold`: fold the event log into the graph and show it."""

from __future__ import annotations

import click

from git_gasp.cli.ids import EventId


@click.command()
@click.argument("path", required=False, type=click.Path())
@click.option("--at", "at", metavar="EVENT_ID", type=EventId(),
              help="Fold only through this event.")
@click.option("--json", "as_json", is_flag=True, help="Print the graph JSON.")
@click.option("--strict", is_flag=True, help="Fail on the first bad line or dangling op.")
def fold(path: str | None, at: str | None, as_json: bool, strict: bool) -> int:
    """Fold the agent's state/events.jsonl (at PATH, default: here) into its graph."""
    import json

    from git_gasp.conformance.runner import resolve_agent_root
    from git_gasp.protocol.summary import printable, summarize
    from git_gasp.store.logview import fold_agent

    view = fold_agent(resolve_agent_root(path), at=at, strict=strict)
    for note in view.notes:
        click.echo(printable(f"note: {note}"), err=True)
    if as_json:
        click.echo(json.dumps(view.result.graph.to_json(), ensure_ascii=False, sort_keys=True))
        return 0
    if view.last_event_id:
        where = f"through {view.last_event_id}"
    else:
        where = "(no valid event)" if view.repo.log_bytes else "(empty log)"
    seeded = f", seeded from {view.seeded_from}" if view.seeded_from else ""
    click.echo(printable(f"{view.repo.log_rel} {where} (line {view.upto_line}){seeded}"))
    for line in summarize(view.result):  # escaped: no control character reaches the terminal
        click.echo(line)
    return 0
