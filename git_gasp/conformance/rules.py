"""Per-event rules of checks 1, 5 and 7, shared by the checks and the pre-commit guard.

The checks apply them to a whole log; the guard applies them only to newly appended
events, given what the log before them holds. Each rule takes the event and the
little it needs to know about other events, and returns the failure messages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from git_gasp.protocol.envelope import OPS_KIND, EnvelopeError, Event, parse_line, serialize
from git_gasp.protocol.jsonstrict import JsonError, json_equal
from git_gasp.protocol.vocab import ENTITY_CREATING


# --- check 1 -------------------------------------------------------------------------
def roundtrip_problem(event: Event) -> str | None:
    """Why a parsed event does not re-serialize structurally equal, or None."""
    try:
        again = parse_line(serialize(event)[:-1], event.line)
        same = json_equal(again.to_dict(), event.to_dict())
    except (EnvelopeError, JsonError, RecursionError) as exc:
        return f"event {event.id} does not re-serialize: {exc}"
    return None if same else f"event {event.id} changes when re-serialized"


# --- check 5 -------------------------------------------------------------------------
def is_root_kind(kind: str) -> bool:
    """Kinds that may have no causation: *.created, *.started and ops-only maintenance."""
    return kind.endswith(".created") or kind.endswith(".started") or kind == OPS_KIND


def causation_problems(
    event: Event, seen: Mapping[str, int], later: Callable[[str], int | None]
) -> Iterator[str]:
    """Check 5 for one event: `seen` maps earlier ids to their first line; `later`
    gives the first line of an id that only appears after this event (or None)."""
    cause = event.causation_id
    if event.id in seen:
        yield f"event id {event.id} is used again (first on line {seen[event.id]})"
    if cause is None:
        if not is_root_kind(event.kind):
            yield (f"event {event.id} ({event.kind}) has no causation; only *.created, "
                   "*.started and ops-only maintenance events may be roots")
    elif cause == event.id:
        yield f"event {event.id} names itself as its cause"
    elif cause not in seen:
        line = later(cause)
        why = f"a later event (line {line})" if line else "no event in the log"
        yield f"event {event.id}: causation_id {cause} names {why}"


# --- check 7 -------------------------------------------------------------------------
def entity_id(kind: str, payload: Any) -> str | None:
    """The entity an entity-creating event creates (its payload.id), else None."""
    if kind in ENTITY_CREATING and type(payload) is dict and type(payload.get("id")) is str:
        return payload["id"]
    return None


def created_node_ids(ops: Any) -> Iterator[Any]:
    """The ids of the CreateNode ops in an ops payload (whatever their type)."""
    for op in ops if type(ops) is list else ():
        body = op.get("CreateNode") if type(op) is dict else None
        if type(body) is dict:
            yield body.get("id")


def ops_cause_problem(event: Event, cause: Event | None) -> str | None:
    """An ops event must name its domain event, never another ops event."""
    if cause is not None and cause.kind == OPS_KIND:
        return (f"ops event {event.id} is caused by another ops event ({cause.id}); "
                "ops must name their domain event")
    return None


def restatement_problems(event: Event, entity_ids: Mapping[str, str]) -> Iterator[str]:
    """An ops-only event may not re-create an entity that a domain event created."""
    for node in created_node_ids(event.payload):
        if type(node) is str and node in entity_ids:
            yield (f"ops-only event {event.id} restates entity {node!r}, created by "
                   f"domain event {entity_ids[node]}")


def pairing_problems(event: Event, pairs: Iterable[Event]) -> Iterator[tuple[int, str]]:
    """(line, message) for an entity-creating `event` and the ops events claiming it."""
    node_kind = ENTITY_CREATING[event.kind]
    payload = event.payload
    if type(payload) is not dict or type(payload.get("id")) is not str:
        yield event.line, f"{event.kind} event {event.id} has no string payload.id"
        return
    pairs = list(pairs)
    if not pairs:
        yield event.line, (f"{event.kind} event {event.id} has no state.ops_applied pair "
                           f"creating {payload['id']!r}")
        return
    if len(pairs) > 1:
        lines = ", ".join(str(p.line) for p in pairs)
        yield event.line, (f"{event.kind} event {event.id} is claimed by {len(pairs)} ops "
                           f"events (lines {lines}); exactly one may pair with it")
    for pair in pairs:
        for problem in _pair_problems(payload, node_kind, pair.payload):
            yield pair.line, f"ops event {pair.id} pairs {event.kind} {event.id}: {problem}"


def _pair_problems(payload: dict, node_kind: str, ops: object) -> list[str]:
    entity = payload["id"]
    creates = []
    for op in ops if type(ops) is list else ():
        body = op.get("CreateNode") if type(op) is dict and len(op) == 1 else None
        if type(body) is dict and body.get("id") == entity:
            creates.append(body)
    if not creates:
        return [f"no CreateNode for {entity!r}"]
    problems = []
    for body in creates:
        if body.get("kind") != node_kind:
            problems.append(f"CreateNode {entity!r} has kind {body.get('kind')!r}, "
                            f"expected {node_kind!r}")
        if "status" in payload:
            props = body.get("props") if type(body.get("props")) is dict else {}
            if props.get("status") != payload["status"]:
                problems.append(f"CreateNode {entity!r} has status {props.get('status')!r} but "
                                f"the domain event says {payload['status']!r}")
    return problems
