"""`git gasp commit-run`: the run's closing commit (log, projections, PATHS, trailers)."""

from __future__ import annotations

import os

import click

from git_gasp.base.errors import GaspError
from git_gasp.cli.ids import NodeId, resolve_node
from git_gasp.cli.options import CONTEXT, WaitCommand, open_state, release_lease, wait_option
from git_gasp.runtime.commit import commit_run as do_commit
from git_gasp.runtime.commit import outstanding_events
from git_gasp.runtime.journal import JOURNAL_REL, append_journal


@click.command("commit-run", context_settings=CONTEXT, cls=WaitCommand)
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--run", "run_id", metavar="RUN_ID", type=NodeId("run"),
              help="Default: the last finished run.")
@click.option("--outcome", help="Default: the run's recorded outcome.")
@click.option("--goal", metavar="GOAL_ID", type=NodeId("goal"), help="Default: the run's goal.")
@click.option("--no-journal", is_flag=True, help="Do not append the run to journal/JOURNAL.md.")
@wait_option
def commit_run(paths, run_id, outcome, goal, no_journal, wait) -> None:
    """Make the run's closing commit: the log, projections and PATHS, with trailers."""
    state = open_state(write=True, wait=wait)
    run_id = resolve_node(state.graph, run_id, "run")
    goal = resolve_node(state.graph, goal, "goal")
    runs = [n for n in state.graph.nodes.values() if n["kind"] == "run"]
    if run_id is None:
        if state.run is not None:
            raise GaspError(f"run {state.run.run_id} is still open; "
                            "`git gasp run finish --outcome …` first")
        finished = [n for n in runs if n["props"].get("status") == "finished"]
        pending = outstanding_events(state.root, state.store.rel)
        if not finished or not any(corr == finished[-1]["id"] for _k, corr in pending):
            _commit_events(state, pending)  # the last run is committed: these are not its
            return
        node = finished[-1]
    else:
        node = state.graph.nodes.get(run_id)
        if node is None or node["kind"] != "run":
            raise GaspError(f"no run {run_id}")
    props = node["props"]
    outcome = outcome or props.get("outcome")
    if not outcome:
        raise GaspError(f"run {node['id']} has no outcome; pass --outcome")
    goal = goal or props.get("goal_id")
    if not no_journal:
        append_journal(state)
    root = state.root
    extra = [p for p in (JOURNAL_REL, "memory", ".agent/packs", "snapshots")
             if (root / p).exists()]
    cwd = os.getcwd()
    extra += [os.path.relpath(os.path.join(cwd, p), root) for p in paths]
    sha = do_commit(root, node["id"], goal, outcome, extra, log_rel=state.store.rel)
    release_lease(state)
    click.echo(sha.decode())


def _commit_events(state, pending: list) -> None:
    """Commit the log's outstanding events (recorded outside any run, or after the last
    run's commit) under a subject naming them; refuse when there are none."""
    from git_gasp.base.errors import GaspError
    from git_gasp.runtime.commit import commit_paths, events_message

    if not pending:
        raise GaspError("nothing to commit: the log holds no event past the last commit")
    sha = commit_paths(state.root, [state.store.rel], events_message(pending),
                       log_rel=state.store.rel)
    release_lease(state)
    click.echo(sha.decode())
