"""`git gasp log`: a readable timeline of the event log."""

from __future__ import annotations

import click

from git_gasp.cli.ids import EventId, NodeId, resolve_node
from git_gasp.cli.options import CONTEXT, open_state


@click.command("log", context_settings=CONTEXT)
@click.option("--kind", "kinds", multiple=True, metavar="PATTERN",
              help="Only kinds matching this glob (repeatable), e.g. 'patch.*'.")
@click.option("--run", "run_id", metavar="RUN_ID", type=NodeId("run"),
              help="Only events of this run.")
@click.option("--since", metavar="EVENT_ID|MS", type=EventId(),
              help="Only events after this event or time.")
@click.option("--ops", is_flag=True, help="Include state.ops_applied events.")
@click.option("--limit", type=int, help="Only the last N matching events.")
@click.option("--json", "as_json", is_flag=True, help="One JSON envelope per line.")
def log(kinds, run_id, since, ops, limit, as_json) -> None:
    """A readable timeline of the event log."""
    import fnmatch
    import json
    from datetime import datetime, timezone

    from git_gasp.base.errors import UsageError
    from git_gasp.store.logview import event_index

    state = open_state()
    run_id = resolve_node(state.graph, run_id, "run")
    events = state.events()
    if since is not None:
        idx = event_index(events, since)
        if idx is not None:
            events = events[idx + 1:]
        elif since.isdigit():
            events = [e for e in events if e.ts_ms > int(since)]
        else:
            raise UsageError(f"--since {since}: neither an event id nor epoch milliseconds")
    if not ops and not kinds:
        events = [e for e in events if e.kind != "state.ops_applied"]
    if kinds:
        events = [e for e in events if any(fnmatch.fnmatchcase(e.kind, k) for k in kinds)]
    if run_id:
        events = [e for e in events if e.correlation_id == run_id]
    if limit is not None:
        events = events[-limit:] if limit > 0 else []
    from git_gasp.protocol.summary import printable
    from git_gasp.runtime.queries import label

    for e in events:
        if as_json:
            click.echo(json.dumps(e.to_dict(), ensure_ascii=False))
            continue
        when = datetime.fromtimestamp(e.ts_ms / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
        p = e.payload if isinstance(e.payload, dict) else {}
        subject = p.get("id") or p.get("run_id") or ""
        node = state.graph.nodes.get(subject) if subject else None
        text = (p.get("outcome") or (label(node) if node else "") or p.get("title")
                or p.get("summary") or p.get("to") or "")
        if e.kind == "state.ops_applied":
            text = f"{len(e.payload) if isinstance(e.payload, list) else '?'} op(s)"
        # escaped: a control character taken from the log never reaches the terminal raw
        click.echo(printable(f"{e.line:>6}  {when}  {e.kind:<26} {subject}  {text}".rstrip()))
