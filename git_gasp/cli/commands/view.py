"""`git gasp view`: the agent's history as one self-contained, offline HTML page (runs
on a timeline, a goal's lineage, search and filters), written and opened."""

from __future__ import annotations

import json
from pathlib import Path

import click

from git_gasp.base.errors import UsageError
from git_gasp.cli.browser import open_page
from git_gasp.cli.dates import event_bound
from git_gasp.cli.ids import EventId, NodeId
from git_gasp.cli.options import CONTEXT, agent_root
from git_gasp.protocol.idmatch import match_id
from git_gasp.protocol.summary import printable
from git_gasp.store.logview import fold_agent
from git_gasp.view import data, page
from git_gasp.view.data import run_ids


@click.command("view", context_settings=CONTEXT)
@click.option("-o", "--output", metavar="FILE", type=click.Path(dir_okay=False),
              help="Write the page here (default: <gitdir>/gasp/view.html).")
@click.option("--since", metavar="DATE|EVENT_ID|MS", type=EventId(),
              help="Only events at or after this date (after this event, after these epoch "
                   "milliseconds), their runs and the nodes they created or changed.")
@click.option("--run", "run_id", metavar="RUN_ID", type=NodeId("run"),
              help="Only this run: its events and the nodes they created or changed.")
@click.option("--no-open", is_flag=True, help="Do not open a browser.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the page's data as JSON instead of writing the page.")
def view(output: str | None, since: str | None, run_id: str | None, no_open: bool,
         as_json: bool) -> None:
    """Write the agent's history as one offline HTML page and open it: runs on a
    timeline, a goal's lineage, search over titles and ids, filters by kind and status."""
    root = agent_root()
    folded = fold_agent(root, use_snapshots=False)  # every event is read: one parse
    for note in folded.notes:
        click.echo(printable(f"note: {note}"), err=True)
    events = folded.repo.parsed.events
    graph = folded.result.graph
    log = folded.repo.log_rel
    since_index, since_ms = _since(events, since) if since else (0, None)
    run = _run(graph, events, run_id, log) if run_id else None
    built = data.build(graph, events, agent=_agent_id(folded.repo), log=log,
                       since_index=since_index, since_ms=since_ms, run=run, since_text=since)
    if as_json:
        click.echo(json.dumps(built, ensure_ascii=False, sort_keys=True))
        return
    html = page.render(built)
    if output:
        out = page.write(html, Path(output))
    else:
        target, git_dir = page.default_path(root)
        out = page.write(html, target, root=git_dir)
    click.echo(printable(f"wrote {out}: {summary(built)}; {len(html) / 1e6:.1f} MB"))
    if not no_open:
        if not open_page(out):
            click.echo("(no graphical browser here; open the file yourself)")


def summary(built: dict) -> str:
    """What the page holds, counted as `fold`, `log --count` and `status` count the log
    (`protocol.logcount`), then what it lists of it (of its scope, with --since or --run)."""
    runs = len(built["runs"])
    listed = sum(1 for n in built["nodes"] if not n.get("missing"))
    text = f"{built['count']['text']}; "
    scope = built["scope"]
    if scope["since"] or scope["run"]:
        text += "in scope: "
    text += (f"{runs} run{'' if runs == 1 else 's'}, the page lists {listed} nodes and "
             f"{len(built['rows'])} events")
    if not (scope["since"] or scope["run"]):
        text += (f" and counts the other {built['raw_nodes']} nodes (tool and model calls) "
                 f"and {built['raw_events']} events in their runs")
    return text


def _agent_id(repo) -> str:
    manifest = getattr(repo, "manifest", None)
    agent = getattr(manifest, "agent_id", None)
    return agent if isinstance(agent, str) and agent else Path(repo.root).name


def _since(events, text: str) -> tuple[int, int | None]:
    """(first event index, first ts_ms) `--since` keeps: after an event (id or unique
    prefix), after epoch milliseconds, or at or after a date (as `log --since`)."""
    idx, when = event_bound(events, "--since", text)
    if idx is not None:
        return idx + 1, None
    return 0, when + 1 if text.isdigit() else when


def _run(graph, events, text: str, log: str) -> str:
    """The run `--run` names (its id, a unique prefix or the short id `log` prints)."""
    ids = run_ids(graph, events)
    full = match_id(ids, text, "run")
    if full not in ids:
        raise UsageError(f"--run {text!r}: no such run in {log}")
    return full
