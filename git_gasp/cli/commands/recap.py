"""`git gasp recap [RUN | --since DATE]`: what runs did, told from the log (no model)."""

from __future__ import annotations

import json

import click

from git_gasp.base.errors import UsageError
from git_gasp.cli.dates import event_bound
from git_gasp.cli.ids import NodeId
from git_gasp.cli.options import CONTEXT, agent_root, open_state, release_lease
from git_gasp.protocol.idmatch import match_id
from git_gasp.protocol.summary import printable
from git_gasp.recap import render
from git_gasp.recap.account import RunRecap, recap_runs, run_ids
from git_gasp.runtime.commit import commit_paths
from git_gasp.runtime.journal import JOURNAL_REL, append_journal
from git_gasp.store.logview import FoldView, fold_agent


@click.command("recap", context_settings=CONTEXT)
@click.argument("run", metavar="RUN", type=NodeId("run"), required=False)
@click.option("--since", metavar="DATE|EVENT_ID|MS",
              help="Every run started at or after this date (after this event, after these "
                   "epoch milliseconds) instead of one run.")
@click.option("--format", "fmt", type=click.Choice(render.FORMATS), default="text",
              show_default=True, help="How to write the account.")
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option("--journal", is_flag=True,
              help="Also append each finished run's Markdown account not yet in "
                   "journal/JOURNAL.md, and commit it.")
def recap(run: str | None, since: str | None, fmt: str, as_json: bool, journal: bool) -> None:
    """Tell what RUN (default: the latest run) or the runs since DATE did: goal, what
    was tried, what failed and why, patches and their commits, evals in order,
    decisions and their reasons, what is left open. Deterministic: read from the log."""
    if run and since:
        raise UsageError("give RUN or --since, not both")
    _folded, runs = read_runs(run, since)
    fmt = "json" if as_json else fmt
    if fmt == "json":
        click.echo(json.dumps({"runs": [r.to_json() for r in runs]}, ensure_ascii=False,
                              sort_keys=True))
    else:
        write = render.markdown if fmt == "markdown" else render.text
        for n, rec in enumerate(runs):
            for line in (("\n" if n else "") + write(rec)).splitlines():
                click.echo(printable(line))  # nothing from the log reaches a terminal raw
    if journal:
        _journal(runs)


def read_runs(run: str | None, since: str | None) -> tuple[FoldView, list[RunRecap]]:
    """The fold of the agent here (its notes said on stderr) and the accounts of the runs
    asked for (`pick_runs`)."""
    folded = fold_agent(agent_root(), use_snapshots=False)  # every event read: one parse
    for note in folded.notes:
        click.echo(printable(f"note: {note}"), err=True)
    events, graph = folded.repo.parsed.events, folded.result.graph
    wanted = pick_runs(run_ids(graph, events), events, run, since, folded.repo.log_rel)
    return folded, recap_runs(graph, events, wanted)


def pick_runs(ids: list[str], events: list, run: str | None, since: str | None,
              log: str) -> list[str]:
    """The runs asked for: RUN (an id, a unique prefix or a short id as `log` prints it),
    the runs started since `since`, else the latest run; a UsageError when none."""
    if run:
        full = match_id(ids, run, "run")
        if full not in ids:
            raise UsageError(f"no run {run!r} in {log} (`git gasp log --kind run.started` "
                             "lists them)")
        return [full]
    if not ids:
        raise UsageError(f"{log} records no run yet")
    if since is None:
        return ids[-1:]
    idx, when = event_bound(events, "--since", since)
    started = {e.payload["run_id"]: (i, e.ts_ms) for i, e in enumerate(events)
               if e.kind == "run.started" and type(e.payload) is dict
               and isinstance(e.payload.get("run_id"), str)}
    keep = [r for r in ids if r in started and (
        started[r][0] > idx if idx is not None else started[r][1] >= when)]
    if not keep:
        raise UsageError(f"no run started since {since}")
    return keep


def _journal(runs: list[RunRecap]) -> None:
    """Append the finished runs' accounts not yet in the journal and commit it."""
    entries = {r.id: render.markdown(r) for r in runs if r.status == "finished"}
    state = open_state(write=True)
    added = append_journal(state, entries)
    release_lease(state)
    if added:
        message = f"journal: recap of {', '.join(added)}\n".encode()
        commit_paths(state.root, [JOURNAL_REL], message, log_rel=state.store.rel)
    skipped = len(runs) - len(added)
    click.echo(printable(f"appended {len(added)} run(s) to {JOURNAL_REL}"
                         + (f" ({skipped} already there or not finished)" if skipped else "")),
               err=True)
