"""`git gasp log`: a readable timeline of the event log, one line per event (as `git log
--oneline`), paged and coloured on a terminal as git does."""

from __future__ import annotations

import click

from git_gasp.cli.ids import EventId, NodeId, resolve_node
from git_gasp.cli.options import CONTEXT, open_state

FORMATS = ("oneline", "medium")


@click.command("log", context_settings=CONTEXT)
@click.option("--kind", "kinds", multiple=True, metavar="PATTERN",
              help="Only kinds matching this glob (repeatable), e.g. 'patch.*'.")
@click.option("--run", "run_id", metavar="RUN_ID", type=NodeId("run"),
              help="Only events of this run.")
@click.option("--since", metavar="EVENT_ID|DATE|MS", type=EventId(),
              help="Only events after this event, or at or after this date.")
@click.option("--until", metavar="EVENT_ID|DATE|MS", type=EventId(),
              help="Only events up to this event, or at or before this date.")
@click.option("--ops", is_flag=True, help="Include state.ops_applied events.")
@click.option("--limit", type=int, help="Only the last N matching events.")
@click.option("--format", "fmt", metavar="FORMAT", default="oneline", show_default=True,
              help="oneline, medium, or format:TEMPLATE (%i id, %h short id, %k kind, "
                   "%d date, %l line, %s subject, %m text, %a actor, %r run, %c cause, "
                   "%n newline).")
@click.option("--json", "as_json", is_flag=True, help="One JSON envelope per line.")
@click.option("--no-pager", is_flag=True, help="Never page the output.")
def log(kinds, run_id, since, until, ops, limit, fmt, as_json, no_pager) -> None:
    """A readable timeline of the event log."""
    import json

    from git_gasp.cli.colour import Painter, wanted
    from git_gasp.cli.logformat import Formatter, template_of
    from git_gasp.cli.pager import paged

    template = template_of(fmt)  # a bad --format is refused before anything is read
    state = open_state()
    run_id = resolve_node(state.graph, run_id, "run")
    events = _select(state.events(), kinds, run_id, since, until, ops, limit)
    with paged(no_pager or as_json) as (out, paging):
        if as_json:
            for e in events:
                out.write(json.dumps(e.to_dict(), ensure_ascii=False) + "\n")
            return
        paint = Painter(wanted(out, paged=paging))
        formatter = Formatter(state.graph, events, paint)
        for e in events:
            out.write(formatter.render(e, template) + "\n")


def _select(events, kinds, run_id, since, until, ops, limit):
    import fnmatch

    if since is not None:
        events = _after(events, since)
    if until is not None:
        events = _through(events, until)
    if not ops and not kinds:
        events = [e for e in events if e.kind != "state.ops_applied"]
    if kinds:
        events = [e for e in events if any(fnmatch.fnmatchcase(e.kind, k) for k in kinds)]
    if run_id:
        events = [e for e in events if e.correlation_id == run_id]
    if limit is not None:
        events = events[-limit:] if limit > 0 else []
    return events


def _after(events, since: str):
    """Events after event `since`, after epoch ms `since`, or at/after date `since`."""
    from git_gasp.store.logview import event_index

    idx = event_index(events, since)
    if idx is not None:
        return events[idx + 1:]
    if since.isdigit():
        return [e for e in events if e.ts_ms > int(since)]
    start = _date("--since", since)  # refused even when no event would be compared
    return [e for e in events if e.ts_ms >= start]


def _through(events, until: str):
    """Events through event `until`, through epoch ms `until`, or at/before date `until`."""
    from git_gasp.store.logview import event_index

    idx = event_index(events, until)
    if idx is not None:
        return events[: idx + 1]
    if until.isdigit():
        return [e for e in events if e.ts_ms <= int(until)]
    end = _date("--until", until)
    return [e for e in events if e.ts_ms <= end]


def _date(option: str, text: str) -> int:
    from git_gasp.base.errors import UsageError
    from git_gasp.cli.dates import parse_date

    when = parse_date(text)
    if when is None:
        raise UsageError(f"{option} {text}: neither an event id, a date (2026-12-01, "
                         "'2 days ago', yesterday) nor epoch milliseconds")
    return when
