"""`git gasp run start|finish|status`: open, close or show the agent's current run."""

from __future__ import annotations

import json

import click

from git_gasp.cli.ids import NodeId, resolve_node
from git_gasp.cli.options import (
    CONTEXT,
    WaitGroup,
    json_obj,
    metadata_option,
    open_state,
    option_labels,
    refused_input,
    release_lease,
    wait_option,
)
from git_gasp.cli.shortids import ShortIds, abbrev_option
from git_gasp.protocol.summary import printable


@click.group(context_settings=CONTEXT, cls=WaitGroup)
def run() -> None:
    """Start, finish or show the agent's current run."""


@run.command("start", context_settings=CONTEXT)
@click.option("--task", required=True, help="What this run is for.")
@click.option("--goal", metavar="GOAL_ID", type=NodeId("goal"),
              help="The goal the run serves.")
@click.option("--task-id", metavar="TASK_ID", type=NodeId("task"),
              help="The task node the run serves.")
@metadata_option
@wait_option
def run_start(task: str, goal: str | None, task_id: str | None, metadata: str | None,
              wait: float | None) -> None:
    """Record run.started; print the run id. Later events chain to it."""
    meta = json_obj(metadata, "--metadata")
    state = open_state(write=True, wait=wait)
    goal = resolve_node(state.graph, goal, "goal")
    task_id = resolve_node(state.graph, task_id, "task")
    with refused_input(option_labels({"task": task, "goal": goal, "task_id": task_id,
                                      "metadata": metadata})):
        rid = state.start_run(task, goal=goal, task_id=task_id, metadata=meta)
    release_lease(state)  # kept for the run's next commands
    click.echo(rid)


@run.command("finish", context_settings=CONTEXT)
@click.option("--outcome", required=True, help="One line: how the run ended.")
@click.option("--run", "run_id", metavar="RUN_ID", type=NodeId("run"),
              help="The run to finish (default: the open one).")
@metadata_option
@wait_option
def run_finish(outcome: str, run_id: str | None, metadata: str | None,
               wait: float | None) -> None:
    """Record run.finished; print the run id."""
    meta = json_obj(metadata, "--metadata")
    state = open_state(write=True, wait=wait)
    run_id = resolve_node(state.graph, run_id, "run")
    with refused_input(option_labels({"outcome": outcome, "metadata": metadata})):
        rid = state.finish_run(outcome, run_id=run_id, metadata=meta)
    release_lease(state)
    click.echo(rid)


@run.command("status", context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True,
              help='Print {"run": null} or {"run": {id, task, goal_id, task_id, ...}}.')
@abbrev_option
def run_status(as_json: bool, abbrev: int | None) -> None:
    """Print the open run, if any (ids short, as log prints them; full in --json)."""
    state = open_state(notes=not as_json)
    run = state.run
    props = state.graph.nodes[run.run_id]["props"] if run is not None else {}
    if as_json:
        shown = None if run is None else {
            "id": run.run_id, "task": props.get("task"), "goal_id": run.goal_id,
            "task_id": run.task_id, "status": props.get("status"),
            "started_ts_ms": props.get("started_ts_ms"), "started_event": run.event_id}
        click.echo(json.dumps({"run": shown}, ensure_ascii=False, sort_keys=True))
        return
    if run is None:
        click.echo("no open run")
        return
    short = ShortIds(state.graph.nodes, abbrev=abbrev).node
    click.echo(printable(f"{short(run.run_id)}  {props.get('task', '')}"
               + (f"  (goal {short(run.goal_id)})" if run.goal_id else "")))
