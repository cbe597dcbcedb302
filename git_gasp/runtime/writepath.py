"""The write path of AgentState: validate an ops batch, resolve its cause, append the
domain event and its ops pair in one lease-checked write, apply the ops, and run the
behaviours subscribed to the event; policy gates and approvals on the way."""

from __future__ import annotations

from collections.abc import Callable
from fnmatch import fnmatchcase
from typing import Any, TypeVar

from git_gasp.base.errors import GaspError
from git_gasp.base.ids import new_id, now_ms, valid_id
from git_gasp.base.record import Record as Value
from git_gasp.protocol.envelope import OPS_KIND, Event
from git_gasp.protocol.fold import apply_op
from git_gasp.protocol.ops import NEEDS_NODE, OpError, parse_ops
from git_gasp.runtime.ops import Op
from git_gasp.runtime.packs import declare
from git_gasp.runtime.policy import ApprovalRequired, Gate, PolicyDenied, Verdict
from git_gasp.store.append import refuse_unwritable

AUTO: Any = object()  # "work it out": the default of every `cause` / `correlation`
MAX_BEHAVIOUR_DEPTH = 8


class StateError(GaspError):
    """A helper was asked for something the state does not allow."""


class Behaviour(Value):

    FIELDS = ("pattern", "handler", "name")

    def __init__(self, pattern: str, handler: Callable[[Any, Event], None], name: str = "") -> None:
        self.pattern = pattern
        self.handler = handler  # called with the state that dispatches the event
        self.name = name


_State = TypeVar("_State", bound="WritePath")  # the class WritePath is mixed into


class WritePath:
    """AgentState's write path (a mixin: the state's attributes are set by AgentState)."""

    def approval(self, approver: str) -> _Approval:
        """``with state.approval(who):`` changes made inside carry `approver`'s sign-off
        for RequireApproval gates."""
        return _Approval(self, approver)

    def _gate(self, gate: Gate, what: str) -> None:
        if gate.verdict is Verdict.DENY:
            raise PolicyDenied(f"policy denies {what}: {gate.reason}")
        if gate.verdict is Verdict.REQUIRE_APPROVAL and not self._approver:
            raise ApprovalRequired(f"{what} requires approval ({gate.reason}); "
                                   "name an approver (--approved-by)")

    def on(self: _State, pattern: str, handler: Callable[[_State, Event], None],
           name: str = "") -> Behaviour:
        """Subscribe `handler(state, event)` to domain events whose kind matches `pattern`."""
        behaviour = Behaviour(pattern, handler, name or getattr(handler, "__name__", "behaviour"))
        self.behaviours.append(behaviour)
        return behaviour

    def declare_kind(self, kind: str, *, required_props: list[str] | None = None,
                     description: str = "", relations: dict[str, str] | None = None) -> None:
        """Declare a node kind (and relations) in the runtime's pack so the repo stays
        conformant (check 3)."""
        self.vocab = declare(self.root, kind, required_props or [], description,
                             relations or {})

    # --- the write path ----------------------------------------------------------
    def _validate(self, ops: list[Op]) -> None:
        """Refuse a batch that would not apply cleanly and completely to the graph."""
        try:
            parsed = parse_ops(ops)
        except OpError as exc:
            raise StateError(f"invalid ops: {exc}") from None
        has_node = self.graph.has_node
        created: set[str] = set()
        for i, (tag, body) in enumerate(parsed, 1):
            where = f"op #{i} ({tag})"
            if tag == "CreateNode":
                nid, kind = body["id"], body["kind"]
                if not valid_id(nid):
                    raise StateError(f"{where}: {nid!r} is not a usable node id")
                if has_node(nid) or nid in created:
                    raise StateError(f"{where}: node {nid} already exists")
                if kind not in self.vocab.node_kinds:
                    raise StateError(f"{where}: node kind {kind!r} is not in the vocabulary; "
                                     "declare it first (AgentState.declare_kind)")
                missing = [p for p in self.vocab.required_props.get(kind, ())
                           if p not in body["props"]]
                if missing:
                    raise StateError(f"{where}: {kind} needs props {', '.join(missing)}")
                self._gate(self.policy.check_node(kind), f"creating a {kind} node")
                created.add(nid)
            elif tag in NEEDS_NODE:
                if not has_node(body["id"]) and body["id"] not in created:
                    raise StateError(f"{where}: node {body['id']} does not exist")
            elif tag == "CreateRelation":
                for end in ("from", "to"):
                    if not has_node(body[end]) and body[end] not in created:
                        raise StateError(f"{where}: {end} node {body[end]} does not exist")
                if body["rel"] not in self.vocab.relations:
                    raise StateError(f"{where}: relation {body['rel']!r} is not in the "
                                     "vocabulary; declare it in a pack first")
                self._gate(self.policy.check_relation(body["rel"]),
                           f"a {body['rel']} relation")
            elif tag == "DeleteRelation":
                if not self.graph.has_relation(body["from"], body["rel"], body["to"]):
                    raise StateError(f"{where}: no relation {body['from']} -{body['rel']}-> "
                                     f"{body['to']}")

    def _resolve_cause(self, kind: str, cause: Any, links: tuple[str | None, ...]) -> str | None:
        if cause is not AUTO:
            if cause is not None and not self.has_event(cause):
                raise StateError(f"cause {cause} is not an event in the log")
            return cause
        if self._triggers:
            return self._triggers[-1].id
        if self.run is not None:
            return self.run.event_id
        for node in links:
            if node:
                creator = self.creator_of(node)
                if creator:
                    return creator
        if kind.endswith((".created", ".started")):
            return None
        raise StateError(f"{kind} needs a cause: start a run first (`git gasp run start`) or "
                         "link it to an existing node")

    def emit(self, kind: str, payload: Any, ops: list[Op] | None = None, *, cause: Any = AUTO,
             correlation: Any = AUTO, actor: tuple[str, str] | None = None,
             links: tuple[str | None, ...] = (),
             before_append: Callable[[], None] | None = None) -> Event:
        """Append a domain event (+ its paired ops event) atomically; return the domain event.

        An event the log could not hold (strict JSON, known payload field types) raises
        WriteRefused (a FormatError naming the field) and appends nothing.

        `before_append` runs once every check has passed, just before the write (an error
        it raises appends nothing)."""
        self._begin()
        return self._emit(kind, payload, ops, cause=cause, correlation=correlation,
                          actor=actor, links=links, before_append=before_append)

    def _emit(self, kind: str, payload: Any, ops: list[Op] | None = None, *,
              cause: Any = AUTO, correlation: Any = AUTO,
              actor: tuple[str, str] | None = None, links: tuple[str | None, ...] = (),
              before_append: Callable[[], None] | None = None) -> Event:
        """emit, for a caller that has just called _begin."""
        if ops:
            self._validate(ops)
        cause_id = self._resolve_cause(kind, cause, links)
        if correlation is AUTO:
            if self.run is not None:
                correlation = self.run.run_id
            elif self._triggers:
                correlation = self._triggers[-1].correlation_id
            elif type(payload) is dict:
                correlation = payload.get("id") or payload.get("run_id")
            else:
                correlation = None
        akind, aid = actor or self.actor
        ts = now_ms()
        domain = Event(new_id("event"), 1, ts, akind, aid, kind, payload, cause_id, correlation)
        batch = [domain]
        if ops:
            batch.append(Event(new_id("event"), 1, ts, akind, aid, OPS_KIND, ops, domain.id,
                               correlation))
        if before_append is not None:
            refuse_unwritable(self.store.rel, batch)  # its side effects need a batch that fits
            before_append()
        self._append(batch)
        self._dispatch(domain)
        return domain

    def apply_ops(self, ops: list[Op], *, cause: str | None = None) -> Event:
        """The raw escape hatch: an ops-only event (validated like every batch).

        With no cause it is a maintenance mutation, which must not restate an entity
        that a domain event created (pairing rule).
        """
        self._begin()
        self._validate(ops)
        if cause is not None and not self.has_event(cause):
            raise StateError(f"cause {cause} is not an event in the log")
        akind, aid = self.actor
        event = Event(new_id("event"), 1, now_ms(), akind, aid, OPS_KIND, ops, cause,
                      self.run.run_id if self.run else None)
        self._append([event])
        return event

    def _append(self, batch: list[Event]) -> None:
        self.store.append(batch)
        for event in batch:
            if event.kind == OPS_KIND:
                for op in event.payload:
                    ((tag, body),) = op.items()
                    reason = apply_op(self.graph, tag, body)
                    if reason is not None:  # pragma: no cover - _validate prevents it
                        raise StateError(f"internal: validated op failed: {reason}")
        self._index(batch)
        self.last_event_id = batch[-1].id

    def _dispatch(self, event: Event) -> None:
        if not self.behaviours:
            return
        matching = [b for b in self.behaviours if fnmatchcase(event.kind, b.pattern)]
        if not matching:
            return
        if len(self._triggers) >= MAX_BEHAVIOUR_DEPTH:
            raise StateError(f"behaviours nest deeper than {MAX_BEHAVIOUR_DEPTH} levels "
                             f"(at {event.kind}); a behaviour probably triggers itself")
        self._triggers.append(event)
        try:
            for behaviour in matching:
                behaviour.handler(self, event)
        finally:
            self._triggers.pop()


class _Approval:
    """`approval`'s context (a class: importing contextlib costs the agent hook 2 %)."""

    def __init__(self, state: Any, approver: str) -> None:
        self.state, self.approver, self.old = state, approver, None

    def __enter__(self) -> None:
        self.old, self.state._approver = self.state._approver, self.approver

    def __exit__(self, *exc: object) -> None:
        self.state._approver = self.old
