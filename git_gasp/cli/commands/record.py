"""`git gasp record …`: record a domain or raw-layer event (and its paired ops).

Each subcommand opens the state, calls the matching `AgentState.record_*` helper with
its flags merged over `--json`, and prints the new id.
"""

from __future__ import annotations

import inspect
from contextlib import nullcontext

import click

from git_gasp.base.errors import UsageError
from git_gasp.cli.ids import NodeId, resolve_node, resolve_options
from git_gasp.cli.notes import driver_note
from git_gasp.cli.options import (
    CONTEXT,
    WaitGroup,
    finite_float,
    json_obj,
    open_state,
    option_labels,
    record_options,
    refused_input,
    release_lease,
    wait_option,
)
from git_gasp.protocol.jsonstrict import unwritable

# annotation words of the record_* helpers -> the JSON types --json may give for them
_JSON_TYPES = {"str": (str,), "dict": (dict,), "float": (int, float), "int": (int,),
               "bool": (bool,), "None": (type(None),), "Any": (str, type(None))}
_TYPE_NAMES = {"str": "a string", "dict": "a JSON object", "float": "a number",
               "int": "an integer", "bool": "true or false", "None": "null", "Any": "a string"}


def _json_kwargs(params, payload: str | None) -> dict:
    """--json's fields as helper arguments, each of the type the helper takes."""
    kwargs = json_obj(payload, "--json", "payload")
    usable = {n: str(p.annotation) for n, p in params.items()
              if all(w.strip() in _JSON_TYPES for w in str(p.annotation).split("|"))}
    unknown = sorted(k for k in kwargs if k not in usable)
    if unknown:
        raise UsageError(f"--json has unknown field{'s' * (len(unknown) > 1)} "
                         f"{', '.join(unknown)} (allowed: {', '.join(usable)})")
    for name, value in kwargs.items():
        words = [w.strip() for w in usable[name].split("|")]
        if not any(type(value) in _JSON_TYPES[w] for w in words):
            want = " or ".join(_TYPE_NAMES[w] for w in words)
            raise UsageError(f"--json: {name}: must be {want}")
    return kwargs


def _call(helper, positional: tuple, flags: dict, payload: str | None):
    """Call a record_* helper with flags merged over a --json payload; a field the log
    cannot hold is a usage error naming the option that gave it."""
    params = inspect.signature(helper).parameters
    kwargs = _json_kwargs(params, payload)
    labels = option_labels(flags, kwargs)
    kwargs.update({k: v for k, v in flags.items() if v is not None})
    names = list(params)[: len(positional)]
    for name, value in zip(names, positional, strict=False):
        if value is not None:
            kwargs[name] = value
    missing = [n for n, p in params.items() if p.default is inspect.Parameter.empty
               and p.kind is not p.VAR_KEYWORD and n not in kwargs]
    if missing:
        raise UsageError(f"missing {', '.join('--' + m.replace('_', '-') for m in missing)}")
    with refused_input(labels):
        return helper(**kwargs)


def _record(helper_name: str, positional: tuple = (), **flags):
    """Open the state, call the helper under the options every record shares, print the id."""
    metadata = flags.pop("metadata", None)
    payload = flags.pop("payload", None)
    cause = flags.pop("cause", None)
    approved_by = flags.pop("approved_by", None)
    wait = flags.pop("wait", None)
    parsed = json_obj(metadata, "--metadata") if metadata is not None else None
    json_obj(payload, "--json", "payload")  # bad JSON is refused before the log is opened
    state = open_state(write=True, wait=wait)
    helper = getattr(state, helper_name)
    flags = resolve_options(state.graph, flags)  # unique prefixes -> full ids
    if parsed is not None:
        flags["metadata"] = parsed
    if cause is not None:
        flags["cause"] = cause
    with state.approval(approved_by) if approved_by else nullcontext():
        result = _call(helper, positional, flags, payload)
    release_lease(state)
    click.echo(result)
    driver_note(state.root)
    return result


@click.group(context_settings=CONTEXT, cls=WaitGroup)
def record() -> None:
    """Record a domain or raw-layer event (and its paired ops); print the new id."""


@record.command("goal", context_settings=CONTEXT)
@click.option("--title")
@click.option("--summary")
@click.option("--status", help="Open (default), Active or Blocked.")
@click.option("--parent", metavar="GOAL_ID", type=NodeId("goal"), help="A goal this one serves.")
@record_options
def record_goal(**kw) -> None:
    """goal.created."""
    _record("record_goal", **kw)


@record.command("task", context_settings=CONTEXT)
@click.option("--title")
@click.option("--goal", metavar="GOAL_ID", type=NodeId("goal"))
@click.option("--status")
@record_options
def record_task(**kw) -> None:
    """task.created (serves --goal)."""
    _record("record_task", **kw)


@record.command("observation", context_settings=CONTEXT)
@click.option("--summary")
@click.option("--about", metavar="NODE_ID", type=NodeId(), help="The node observed.")
@click.option("--source")
@record_options
def record_observation(**kw) -> None:
    """observation.created."""
    _record("record_observation", **kw)


@record.command("failure", context_settings=CONTEXT)
@click.option("--summary")
@click.option("--observation", metavar="OBSERVATION_ID", type=NodeId("observation"))
@record_options
def record_failure(**kw) -> None:
    """failure.observed."""
    _record("record_failure", **kw)


@record.command("hypothesis", context_settings=CONTEXT)
@click.option("--statement")
@click.option("--explains", metavar="FAILURE_ID", type=NodeId("failure"))
@record_options
def record_hypothesis(**kw) -> None:
    """hypothesis.created."""
    _record("record_hypothesis", **kw)


@record.command("patch", context_settings=CONTEXT)
@click.option("--title")
@click.option("--summary")
@click.option("--advances", metavar="GOAL_ID", type=NodeId("goal"))
@click.option("--addresses", metavar="FAILURE_ID", type=NodeId("failure"))
@click.option("--hypothesis", metavar="HYPOTHESIS_ID", type=NodeId("hypothesis"))
@click.option("--commit", metavar="SHA", help="The commit the patch pins (references_commit).")
@click.option("--skill", metavar="NAME", help="The skill the patch changes (track record).")
@record_options
def record_patch(**kw) -> None:
    """patch.proposed (status Proposed)."""
    _record("propose_patch", **kw)


@record.command("eval", context_settings=CONTEXT)
@click.option("--command", "command")
@click.option("--status", help="Passed or Failed.")
@click.option("--score", type=float, callback=finite_float)
@click.option("--validates", metavar="PATCH_ID", type=NodeId("patch"))
@record_options
def record_eval(**kw) -> None:
    """eval.finished (PATCH validated_by the eval)."""
    _record("record_eval", **kw)


@record.command("decision", context_settings=CONTEXT)
@click.option("--status", help="Approved (promotes --patch) or Rejected.")
@click.option("--reason")
@click.option("--patch", metavar="PATCH_ID", type=NodeId("patch"))
@click.option("--decided-by", metavar="NAME", help="A person who decided (actor kind user).")
@record_options
def record_decision(decided_by: str | None, **kw) -> None:
    """decision.created (Approved promotes the patch, policy permitting)."""
    _record("record_decision", decided_by=("user", decided_by) if decided_by else None, **kw)


@record.command("frame", context_settings=CONTEXT)
@click.option("--title")
@click.option("--summary")
@record_options
def record_frame(**kw) -> None:
    """frame.created."""
    _record("record_frame", **kw)


def _call_pair(start: str, finish: str, start_kw: dict, output: str | None,
               success: bool | None, common_kw: dict) -> None:
    if output is not None:  # both events or neither: refuse it before tool.called is written
        problem = unwritable(output, "payload.output_summary", 3)
        if problem:
            raise UsageError(f"--output: {problem}")
    given = common_kw.get("metadata")
    metadata = json_obj(given, "--metadata") if given is not None else None
    json_obj(common_kw.get("payload"), "--json", "payload")
    state = open_state(write=True, wait=common_kw.get("wait"))
    approved = common_kw.get("approved_by")
    with state.approval(approved) if approved else nullcontext():
        flags = {**start_kw, "metadata": metadata}
        call_id = _call(getattr(state, start), (), flags, common_kw.get("payload"))
        if output is not None or success is not None:
            with refused_input({"output_summary": "--output"}):
                getattr(state, finish)(call_id, output_summary=output or "",
                                       success=True if success is None else success)
    release_lease(state)
    click.echo(call_id)


@record.command("tool-call", context_settings=CONTEXT)
@click.option("--tool")
@click.option("--input", "input_summary")
@click.option("--output", help="Also record tool.finished with this output summary.")
@click.option("--success/--failure", default=None, help="Also record tool.finished.")
@record_options
def record_tool_call(tool, input_summary, output, success, **common_kw) -> None:
    """tool.called (and tool.finished with --output / --success / --failure)."""
    _call_pair("record_tool_call", "finish_tool_call",
               {"tool": tool, "input_summary": input_summary}, output, success, common_kw)


@record.command("model-call", context_settings=CONTEXT)
@click.option("--model")
@click.option("--provider")
@click.option("--input", "input_summary")
@click.option("--output", help="Also record model.finished with this output summary.")
@click.option("--success/--failure", default=None, help="Also record model.finished.")
@record_options
def record_model_call(model, provider, input_summary, output, success, **common_kw) -> None:
    """model.called (and model.finished with --output / --success / --failure)."""
    _call_pair("record_model_call", "finish_model_call",
               {"model": model, "provider": provider, "input_summary": input_summary},
               output, success, common_kw)


@record.command("status", context_settings=CONTEXT)
@click.argument("node", type=NodeId())
@click.argument("status")
@click.option("--reason")
@wait_option
def record_status(node: str, status: str, reason: str | None, wait: float | None) -> None:
    """<kind>.status_changed after validating the transition."""
    state = open_state(write=True, wait=wait)
    node = resolve_node(state.graph, node)
    with refused_input({"reason": "--reason"} if reason is not None else {}):
        click.echo(state.update_status(node, status, reason=reason))
    release_lease(state)
