"""Click helpers the state commands share: the agent root, opening the state, the lease,
JSON-object options and the options every `record` subcommand takes.

The agent root is the nearest directory up from here holding AGENT.md. The lease
is taken by the first append and kept while a run is open (so no other worker can
write into it); otherwise each command gives it back when it is done.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click

from git_gasp.base.errors import UsageError
from git_gasp.protocol.jsonstrict import JsonError, loads_strict, unwritable
from git_gasp.runtime.state import AgentState
from git_gasp.store.append import WriteRefused
from git_gasp.store.lease import Lease, default_worker_id
from git_gasp.store.lease_wait import take
from git_gasp.store.location import resolve_agent_root

CONTEXT = {"help_option_names": ["-h", "--help"]}
WAIT = "--wait"
DEFAULT_WAIT_S = 60.0  # a bare --wait: longer than a sync under contention holds the lease


class WaitOption(click.Option):
    """`--wait[=SECONDS]`: the value only ever attached with `=`, as git's options with
    an optional value (`WaitCommand` turns a bare `--wait` into the default)."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        record = super().get_help_record(ctx)
        return None if record is None else (f"{WAIT}[=SECONDS]", record[1])


def bare_wait(cmd: click.Command, args: list[str]) -> list[str]:
    """`args` with each bare `--wait` (an option, not another option's value, before
    `--`) given the default: `--wait=60`."""
    if not any(isinstance(p, WaitOption) for p in cmd.params):
        return args
    valued = {o for p in cmd.params if isinstance(p, click.Option) and not p.is_flag
              and not p.count for o in p.opts}
    out: list[str] = []
    rest = iter(args)
    for arg in rest:
        if arg == "--":
            out += [arg, *rest]
            break
        out.append(f"{WAIT}={DEFAULT_WAIT_S:g}" if arg == WAIT else arg)
        if arg in valued and arg != WAIT:
            nxt = next(rest, None)  # that option's value, whatever it looks like
            if nxt is not None:
                out.append(nxt)
    return out


class WaitCommand(click.Command):
    """A command with `--wait[=SECONDS]` (see `bare_wait`)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, bare_wait(self, args))


class WaitGroup(click.Group):
    """A group whose subcommands (`@group.command`) are `WaitCommand`s."""

    command_class = WaitCommand


def wait_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`--wait[=SECONDS]`: wait for a lease another process holds (a sync) instead of
    refusing at once."""
    return click.option(
        WAIT, "wait", cls=WaitOption, type=click.FloatRange(min=0), default=None,
        help=f"Wait up to SECONDS (bare: {DEFAULT_WAIT_S:g}) for a lease another process "
             "holds (a sync, another writer) instead of refusing at once.")(fn)


def agent_root():
    """The agent root for the cwd (`store.location.find_root`: the configured state,
    else the nearest GASP manifest at or above)."""
    return resolve_agent_root(None)


def open_state(*, notes: bool = True, write: bool = False, wait: float | None = None,
               root=None):
    """Open the agent's state (at `root`, default the one here) as this worker; print
    its notes on stderr.

    A writer (`write`) takes the lease first, so it reads and appends with no sync or
    other writer in between: a held lease is refused at once, or waited for up to
    `wait` seconds. Its lease is given back (or kept for an open run) when the command
    ends, however it ends."""
    root, worker = root if root is not None else agent_root(), default_worker_id()
    lease = None
    if write:
        lease = Lease(root, worker)
        take(lease, wait)
    state = AgentState.open(root, worker)
    if lease is not None:  # whether it carried over this worker's kept lease (its run)
        state.store.lease.inherited = lease.inherited
    if notes:
        for note in state.notes:
            click.echo(f"note: {note}", err=True)
    if lease is not None and lease.reclaimed is not None:
        click.echo(f"note: {takeover_note(lease.reclaimed, state)}", err=True)
    state.store.lease.on_reclaim = lambda rec: click.echo(f"note: {takeover_note(rec, state)}",
                                                          err=True)
    if write:
        click.get_current_context().call_on_close(lambda: release_lease(state))
    return state


def takeover_note(rec, state) -> str:
    """What a write that took over a dead or expired lease says (and of the run it left)."""
    run = state.run
    return (f"took over the lease of {rec.describe()}"
            + (f"; its unfinished run {run.run_id} is resumed" if run is not None else ""))


def release_lease(state) -> None:
    """Keep the lease while a run is open; otherwise give it back (once: a second call,
    when the command ends, does nothing)."""
    if getattr(state, "_lease_settled", False):
        return
    state._lease_settled = True
    state.settle_lease()


def json_obj(text: str | None, what: str, where: str = "payload.metadata") -> dict:
    """Parse an option's JSON object (`{}` when not given) strictly, as check 1 reads a log
    line: no NaN/Infinity, no number out of range, no duplicate key, no lone surrogate.
    UsageError naming the option (and the field, `where` being the object's place in the
    event) otherwise."""
    if text is None:
        return {}
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(f"{what}: the text is not valid UTF-8") from None
    try:
        value = loads_strict(raw)
    except JsonError as exc:
        raise UsageError(f"{what}: {_locate(text, where) or exc}") from None
    if type(value) is not dict:
        raise UsageError(f"{what} must be a JSON object")
    return value


def _locate(text: str, where: str) -> str | None:
    """The field (and reason) a strict parse refused, found by a lenient parse."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return unwritable(value, where, where.count(".") + 2)


def finite_float(ctx: click.Context, param: click.Parameter, value: float | None):
    """A click callback: the number must be finite (JSON has no NaN or infinity)."""
    if value is not None and not math.isfinite(value):
        raise UsageError(f"{param.opts[0]}: must be a finite number, not {value}")
    return value


def option_labels(flags: dict[str, Any], json_keys=()) -> dict[str, str]:
    """field name -> the option that gave it: the current command's flags that were given
    (by their parameter name) and `--json`'s keys."""
    params = {p.name: p.opts[0] for p in click.get_current_context().command.params
              if isinstance(p, click.Option)}
    labels = {k: "--json" for k in json_keys}
    labels.update({k: params.get(k, "--" + k.replace("_", "-"))
                   for k, v in flags.items() if v is not None})
    return labels


@contextmanager
def refused_input(labels: dict[str, str]) -> Iterator[None]:
    """Turn the writer's refusal of a field the user gave into a usage error naming the
    option: `--metadata: payload.metadata.x: integer … does not fit in 64 bits`."""
    try:
        yield
    except WriteRefused as exc:
        label = _label_for(exc.field, labels)
        if label is None:
            raise
        raise UsageError(f"{label}: {exc.problem}") from None


def _label_for(field: str | None, labels: dict[str, str]) -> str | None:
    if not field:
        return None
    for segment in re.split(r"[.\[\]]+", field)[1:]:  # after "payload"
        if segment in labels:
            return labels[segment]
    return None


metadata_option = click.option("--metadata", metavar="OBJECT", help="Metadata as a JSON object.")


def record_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Options every `record` subcommand takes."""
    fn = click.option("--json", "payload", metavar="OBJECT",
                      help="Fields as a JSON object (flags override it).")(fn)
    fn = metadata_option(fn)
    fn = click.option("--cause", metavar="EVENT_ID",
                      help="Causation (default: the open run, else the linked node).")(fn)
    fn = click.option("--approved-by", metavar="NAME",
                      help="Approver for changes a policy gate requires approval for.")(fn)
    return wait_option(fn)
