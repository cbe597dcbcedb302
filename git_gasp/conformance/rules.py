"""Per-event rules of checks 1, 2, 3, 5 and 7, shared by the checks and the pre-commit
guard.

The checks apply them to a log (``logstate``: a whole log, or only the lines after a
saved state); the guard applies them only to newly appended events, given what the log
before them holds. Each rule takes the event and the little it needs to know about
other events, and returns the failure messages: the messages are built here only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from git_gasp.protocol.envelope import (
    OPS_KIND,
    EnvelopeError,
    Event,
    canonical_layout,
    float_differs,
    parse_line,
    serialize,
)
from git_gasp.protocol.jsonstrict import JsonError, json_equal
from git_gasp.protocol.vocab import ENTITY_CREATING, Vocabulary


# --- check 1 -------------------------------------------------------------------------
def is_canonical_line(event: Event, raw: bytes) -> bool:
    """True when `raw` (the line `event` was strictly parsed from) is byte for byte what
    `serialize(event)` writes, decided at C speed; False means "not known".

    Then `roundtrip_problem(event)` is None: serialize does not raise (the strict parse
    already refused everything it refuses) and parsing its output is parsing `raw`
    again. orjson's compact encoding equals the json module's (``ensure_ascii=False``)
    for every string and key order, and for every float whose orjson bytes hold neither
    ``e-`` nor ``0.0000`` (tests/conformance/test_rules_canonical.py pins both), so:
    no such number in `raw` (``float_differs``), and `raw` is the envelope in canonical
    key order with the payload key-sorted at every level (``canonical_layout``).
    ``envelope.parse_canonical`` decides the same while it parses.
    """
    return canonical_layout(event, raw) and not float_differs(raw)


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


def reused_id(event_id: str, first: int) -> str:
    return f"event id {event_id} is used again (first on line {first})"


def root_problem(event: Event) -> str | None:
    """Why an event without causation may not be a root, or None (check 5)."""
    if is_root_kind(event.kind):
        return None
    return (f"event {event.id} ({event.kind}) has no causation; only *.created, "
            "*.started and ops-only maintenance events may be roots")


def self_cause(event_id: str) -> str:
    return f"event {event_id} names itself as its cause"


def unseen_cause(event_id: str, cause: str, later: int | None) -> str:
    """A causation naming no earlier event: `later` is the first line of `cause` (after
    the event) or None."""
    why = f"a later event (line {later})" if later else "no event in the log"
    return f"event {event_id}: causation_id {cause} names {why}"


def causation_problems(
    event: Event, seen: Mapping[str, int], later: Callable[[str], int | None]
) -> Iterator[str]:
    """Check 5 for one event: `seen` maps earlier ids to their first line; `later`
    gives the first line of an id that only appears after this event (or None)."""
    cause = event.causation_id
    if event.id in seen:
        yield reused_id(event.id, seen[event.id])
    if cause is None:
        problem = root_problem(event)
        if problem:
            yield problem
    elif cause == event.id:
        yield self_cause(event.id)
    elif cause not in seen:
        yield unseen_cause(event.id, cause, later(cause))


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


def chained_ops(event_id: str, cause_id: str) -> str:
    return (f"ops event {event_id} is caused by another ops event ({cause_id}); "
            "ops must name their domain event")


def ops_cause_problem(event: Event, cause: Event | None) -> str | None:
    """An ops event must name its domain event, never another ops event."""
    if cause is not None and cause.kind == OPS_KIND:
        return chained_ops(event.id, cause.id)
    return None


def restates(event_id: str, node: str, creator_id: str) -> str:
    return (f"ops-only event {event_id} restates entity {node!r}, created by "
            f"domain event {creator_id}")


def restatement_problems(event: Event, entity_ids: Mapping[str, str]) -> Iterator[str]:
    """An ops-only event may not re-create an entity that a domain event created."""
    for node in created_node_ids(event.payload):
        if type(node) is str and node in entity_ids:
            yield restates(event.id, node, entity_ids[node])


def pairing_subject(payload: Any) -> dict | None:
    """What pairing reads of an entity-creating event's payload ({"id"[, "status"]}),
    or None when it has no string payload.id."""
    if type(payload) is not dict or type(payload.get("id")) is not str:
        return None
    subject = {"id": payload["id"]}
    if "status" in payload:
        subject["status"] = payload["status"]
    return subject


def no_payload_id(kind: str, event_id: str) -> str:
    return f"{kind} event {event_id} has no string payload.id"


def claim_problems(kind: str, event_id: str, subject: dict, pair_id: str,
                   pair_payload: Any) -> list[str]:
    """The messages (at the claim's line) for one ops event claiming the entity-creating
    event `event_id` of `kind`, whose `pairing_subject` is `subject`."""
    return [f"ops event {pair_id} pairs {kind} {event_id}: {problem}"
            for problem in _pair_problems(subject, ENTITY_CREATING[kind], pair_payload)]


def claimed_problems(line: int, kind: str, event_id: str, entity: str,
                     claims: list[tuple[int, list[str]]]) -> Iterator[tuple[int, str]]:
    """(line, message) for an entity-creating event on `line` with a string payload.id
    `entity`, given every claim on it as (claim line, its `claim_problems`) in order."""
    if not claims:
        yield line, (f"{kind} event {event_id} has no state.ops_applied pair "
                     f"creating {entity!r}")
        return
    if len(claims) > 1:
        lines = ", ".join(str(at) for at, _ in claims)
        yield line, (f"{kind} event {event_id} is claimed by {len(claims)} ops "
                     f"events (lines {lines}); exactly one may pair with it")
    for at, problems in claims:
        for problem in problems:
            yield at, problem


def pairing_problems(event: Event, pairs: Iterable[Event]) -> Iterator[tuple[int, str]]:
    """(line, message) for an entity-creating `event` and the ops events claiming it."""
    subject = pairing_subject(event.payload)
    if subject is None:
        yield event.line, no_payload_id(event.kind, event.id)
        return
    claims = [(p.line, claim_problems(event.kind, event.id, subject, p.id, p.payload))
              for p in pairs]
    yield from claimed_problems(event.line, event.kind, event.id, subject["id"], claims)


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


# --- checks 2 and 3 (per op of an ops event) -----------------------------------------
def skipped_op(event_id: str, index: int, reason: str, missing_node: bool = False) -> str:
    """Check 2's message for an op the fold skips (`index` 0: the whole payload)."""
    where = f"op #{index}: " if index else ""
    return f"event {event_id}: {where}{reason}" + ("; the fold skips it" if missing_node else "")


def vocabulary_problems(event_id: str, index: int, tag: str, body: dict,
                        vocab: Vocabulary) -> Iterator[str]:
    """Check 3 for one well-formed op: node kinds and relations must be in `vocab`, and
    a node of a pack's kind needs the props the pack requires."""
    if tag == "CreateNode":
        kind = body["kind"]
        if kind not in vocab.node_kinds:
            yield (f"event {event_id} op #{index}: node kind {kind!r} is not in the "
                   "baseline vocabulary or a pack in .agent/packs/")
        missing = [p for p in vocab.required_props.get(kind, ()) if p not in body["props"]]
        if missing:
            yield (f"event {event_id} op #{index}: {kind} node {body['id']!r} lacks "
                   f"required prop{'s' * (len(missing) > 1)} {', '.join(missing)} "
                   "(declared by a pack)")
    elif tag == "CreateRelation" and body["rel"] not in vocab.relations:
        yield (f"event {event_id} op #{index}: relation {body['rel']!r} is not in the "
               "baseline vocabulary or a pack in .agent/packs/")


def vocabulary_view(vocab: Vocabulary, kinds: Iterable[str], rels: Iterable[str]) -> tuple:
    """What check 3's verdicts on ops using only `kinds` and `rels` depend on: equal
    views give equal verdicts."""
    return (tuple((k, k in vocab.node_kinds, tuple(vocab.required_props.get(k, ())))
                  for k in sorted(kinds)),
            tuple((r, r in vocab.relations) for r in sorted(rels)))
