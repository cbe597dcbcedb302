"""Click helpers the state commands share: the agent root, opening the state, the lease,
JSON-object options and the options every `record` subcommand takes.

The agent root is the nearest directory up from here holding AGENT.md. The lease
is taken by the first append and kept while a run is open (so no other worker can
write into it); otherwise each command gives it back when it is done.

Only click is imported here; the runtime is imported when a helper runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

CONTEXT = {"help_option_names": ["-h", "--help"]}


def agent_root():
    """The agent root: the nearest directory at or above the cwd holding AGENT.md."""
    from git_gasp.conformance.runner import resolve_agent_root

    return resolve_agent_root(None)


def open_state(*, notes: bool = True):
    """Open the agent's state as this worker; print its notes on stderr."""
    from git_gasp.runtime.state import AgentState
    from git_gasp.store.lease import default_worker_id

    state = AgentState.open(agent_root(), default_worker_id())
    if notes:
        for note in state.notes:
            click.echo(f"note: {note}", err=True)
    return state


def release_lease(state) -> None:
    """Keep the lease while a run is open; otherwise give it back."""
    from git_gasp.store.lease import LeaseError

    if state.run is None:
        try:
            state.store.lease.release()
        except LeaseError:
            pass


def json_obj(text: str | None, what: str) -> dict:
    """Parse an option's JSON object (`{}` when not given); UsageError otherwise."""
    import json

    from git_gasp.base.errors import UsageError

    if text is None:
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{what} is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise UsageError(f"{what} must be a JSON object")
    return value


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
    return fn
