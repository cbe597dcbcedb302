"""`git gasp log`: a readable timeline of the event log, newest first, one line per event
(as `git log --oneline`), paged and coloured on a terminal as git does, with git's
options (-n, --reverse, --format codes, --abbrev, --color)."""

from __future__ import annotations

import fnmatch
import json

import click

from git_gasp.cli.colour import Painter, wanted
from git_gasp.cli.dates import event_bound
from git_gasp.cli.ids import EventId, NodeId, resolve_node
from git_gasp.cli.logformat import Formatter, template_of
from git_gasp.cli.options import CONTEXT, open_state
from git_gasp.cli.pager import paged
from git_gasp.cli.shortids import abbrev_option
from git_gasp.protocol.envelope import OPS_KIND
from git_gasp.protocol.logcount import LogCount, events_phrase

FORMATS = ("oneline", "medium")


class LogCommand(click.Command):
    """`--color[=WHEN]` as git takes it: a bare ``--color`` is ``--color=always``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        out, rest = [], iter(args)
        for arg in rest:
            if arg == "--":
                out += [arg, *rest]
                break
            out.append("--color=always" if arg in ("--color", "--colour") else arg)
        return super().parse_args(ctx, out)


@click.command("log", cls=LogCommand, context_settings=CONTEXT)
@click.option("--kind", "kinds", multiple=True, metavar="PATTERN",
              help="Only kinds matching this glob (repeatable), e.g. 'patch.*'.")
@click.option("--run", "run_id", metavar="RUN_ID", type=NodeId("run"),
              help="Only events of this run.")
@click.option("--since", metavar="EVENT_ID|DATE|MS", type=EventId(),
              help="Only events after this event, or at or after this date.")
@click.option("--until", metavar="EVENT_ID|DATE|MS", type=EventId(),
              help="Only events up to this event, or at or before this date.")
@click.option("--ops", is_flag=True, help="Include state.ops_applied events.")
@click.option("-n", "--max-count", "limit", type=click.IntRange(min=0), metavar="N",
              help="Only the N newest matching events.")
@click.option("--limit", "limit", type=click.IntRange(min=0), hidden=True)
@click.option("--reverse", is_flag=True,
              help="Oldest first (after -n picks the newest); --json is in log order.")
@click.option("--format", "--pretty", "fmt", metavar="FORMAT", default="oneline",
              show_default=True,
              help="oneline, medium, or format:TEMPLATE (%H id, %h short id, %s subject, "
                   "%an actor, %ad date, %ar relative date, %at epoch seconds, %k kind, "
                   "%N node, %S short node, %l line, %m text on one line, %M text, %r run, "
                   "%c cause, %n newline, %% a %).")
@click.option("--oneline", "fmt", flag_value="oneline", help="Same as --format oneline.")
@abbrev_option
@click.option("--color", "--colour", "color", metavar="[=WHEN]", default=None,
              type=click.Choice(["always", "never", "auto"]),
              help="Colour: always (a bare --color), never, or auto (on a terminal: the "
                   "default).")
@click.option("--no-color", "--no-colour", "color", flag_value="never",
              help="Same as --color=never.")
@click.option("--json", "as_json", is_flag=True, help="One JSON envelope per line.")
@click.option("--count", is_flag=True,
              help="Print how many events match, by layer (domain, ops), instead of them.")
@click.option("--no-pager", is_flag=True, help="Never page the output.")
def log(kinds, run_id, since, until, ops, limit, reverse, fmt, abbrev, color, as_json,
        count, no_pager) -> None:
    """A readable timeline of the event log, newest first, as git log shows commits."""
    template = template_of(fmt)  # a bad --format is refused before anything is read
    state = open_state()
    run_id = resolve_node(state.graph, run_id, "run")
    every = state.events()
    events = _select(every, kinds, run_id, since, until, ops, limit)
    if count:
        click.echo(_count_line(every, events, kinds, run_id, since, until, ops, limit))
        return
    with paged(no_pager or as_json) as (out, paging):
        if as_json:  # a stream of the log's envelopes: in the log's order (docs/json.md)
            for e in events:
                out.write(json.dumps(e.to_dict(), ensure_ascii=False) + "\n")
            return
        on = color == "always" or (color != "never" and wanted(out, paged=paging))
        formatter = Formatter(state.graph, [e.id for e in every], Painter(on), abbrev)  # None: 6
        for e in events if reverse else events[::-1]:
            out.write(formatter.render(e, template) + "\n")


def _count_line(every, events, kinds, run_id, since, until, ops, limit) -> str:
    """``N events (D domain, O ops)`` of the selection (`protocol.logcount`'s words), and
    the ops events left out when the default (domain) layer hid them."""
    n = LogCount(events, 0)
    line = events_phrase(n.domain, n.ops)
    if not ops and not kinds and limit is None:
        hidden = LogCount(_select(every, (OPS_KIND,), run_id, since, until, True, None), 0)
        if hidden.ops:
            line += f"; --ops adds {hidden.ops} ops event{'' if hidden.ops == 1 else 's'}"
    return line


def _select(events, kinds, run_id, since, until, ops, limit):
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
    idx, when = event_bound(events, "--since", since)  # refused even with no events
    if idx is not None:
        return events[idx + 1:]
    after = when + 1 if since.isdigit() else when  # epoch ms: after it; a date: at it
    return [e for e in events if e.ts_ms >= after]


def _through(events, until: str):
    """Events through event `until`, through epoch ms `until`, or at/before date `until`."""
    idx, when = event_bound(events, "--until", until)
    if idx is not None:
        return events[: idx + 1]
    return [e for e in events if e.ts_ms <= when]
