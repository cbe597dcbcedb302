"""What checks 1, 2, 3, 5 and 7 know about a log, resumable line by line.

A `LogState` is fed the log's lines in order and applies every per-event rule
(``rules``) to each line as it comes; `findings()` then gives each check's failures in
the order a whole-log pass reports them. The cold check is a state started empty and
fed the whole log; a cached re-check is a state saved for a verified prefix of the log
(``logstate_cache``) and fed only the lines after it — the same code, so the same
findings.

What a saved state keeps of the lines before it is small and per fact, never per
event: the findings so far, the start offset of every line, and sorted 64-bit keys
(``lineindex``) naming the lines that hold each fact a later line may ask about — the
first line of an event id and its other lines, the ops events claiming an id, the first
domain event creating an entity, the ops-only events creating a node, the first
well-formed CreateNode of a node. An answer is always confirmed by strictly parsing the
line a key names. Findings that depend on later lines are kept open: a causation or an
ops cause naming an id not seen yet is rendered when the findings are asked for, a
restatement of an entity first created later is added when its creator comes, and the
pairing of a domain event is recomputed when a later ops event claims it.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator
from typing import Any

from git_gasp.conformance.logsource import LogSource
from git_gasp.conformance.rules import (
    chained_ops,
    claim_problems,
    claimed_problems,
    created_node_ids,
    entity_id,
    is_root_kind,
    no_payload_id,
    pairing_subject,
    restates,
    reused_id,
    root_problem,
    roundtrip_problem,
    self_cause,
    skipped_op,
    vocabulary_problems,
)
from git_gasp.conformance.saved.lineindex import candidates, key, line_starts, merged
from git_gasp.protocol.envelope import (
    OPS_KIND,
    EnvelopeError,
    Event,
    parse_canonical,
    parse_line,
)
from git_gasp.protocol.fold import missing_node_reason
from git_gasp.protocol.ops import NEEDS_NODE, OP_FIELDS, OpError, parse_op
from git_gasp.protocol.vocab import ENTITY_CREATING, Vocabulary

FIRST, DUP, CLAIM, ENTITY, OPS_ONLY, NODE = 1, 2, 3, 4, 5, 6  # the key tables
# The fields of the ops `_ops` validates inline (``ops.OP_FIELDS``; tests pin the types).
_CREATE_NODE = OP_FIELDS["CreateNode"].keys()
_CREATE_RELATION = OP_FIELDS["CreateRelation"].keys()
_UPDATE_NODE = OP_FIELDS["UpdateNode"].keys()
_UNKNOWN = object()

Line = tuple[int, str]  # (line, message)


class Group:
    """An entity-creating event and the claims on it so far (check 7's pairing)."""

    __slots__ = ("line", "kind", "eid", "subject", "claims")

    def __init__(self, line: int, kind: str, eid: str, subject: dict) -> None:
        self.line, self.kind, self.eid, self.subject = line, kind, eid, subject
        self.claims: list[tuple[int, list[str]]] = []

    def claim(self, line: int, pair: Event) -> None:
        self.claims.append((line, claim_problems(self.kind, self.eid, self.subject, pair.id,
                                                 pair.payload)))

    def problems(self) -> list[Line]:
        return list(claimed_problems(self.line, self.kind, self.eid, self.subject["id"],
                                     self.claims))


class LogState:
    """The checks' knowledge of the first `line_count` lines of the log in `source`."""

    def __init__(self, source: LogSource, vocab: Vocabulary) -> None:
        self.source, self.vocab = source, vocab
        # the saved part (empty for a cold start)
        self.old_lines = 0
        self.keys = array("Q")
        # every line fed so far
        self.offsets = array("Q")  # start offset of each line
        self.line_count = 0
        self.length = 0  # bytes of the newline-terminated lines
        self.last_line: tuple[int, int, bool] | None = None  # unterminated (line, start, parsed)
        # findings (the saved ones first)
        self.errors: list[Line] = []  # check 1: lines that are not events
        self.roundtrip: list[Line] = []  # check 1: events that do not re-serialize
        self.skips: list[tuple[int, bool, str]] = []  # check 2: (line, missing node?, msg)
        self.vocab_failures: list[Line] = []  # check 3
        self.kinds: set[str] = set()  # node kinds and relations the ops use
        self.rels: set[str] = set()
        self.causation: list[tuple[int, int, str | None, str | None, str | None]] = []
        self.chained: list[tuple[int, str | None, str | None, str | None]] = []  # check 7
        self.restated: list[tuple[int, int, str]] = []  # check 7: (line, position, msg)
        self.pairing: dict[int, list[Line]] = {}  # check 7: entity line -> problems
        self.snapshots: list = []  # check 2's snapshot verdicts (``snapshot_check``)
        # facts of the lines fed since the saved part
        self.first: dict[str, int] = {}
        self.ops_first: set[str] = set()  # ids whose first event is an ops event
        self.dups: dict[str, list[int]] = {}
        self.claims: dict[str, list[int]] = {}
        self.entities: dict[str, tuple[int, str]] = {}
        self.ops_only: dict[str, list[tuple[int, int, str]]] = {}
        self.nodes: dict[str, int] = {}
        self.groups: dict[str, list[Group]] = {}
        self.reopened: set[str] = set()  # ids whose saved pairings are recomputed
        self.reopened_lines: set[int] = set()
        self.listeners: list[Callable[[Event], None]] = []
        # answers about saved lines, memoised
        self._events: dict[int, Event | None] = {}
        self._old: dict[tuple[int, str], Any] = {}

    # ---- feeding

    def feed(self, chunk: bytes, at: int, *, final: bool = True) -> None:
        """Apply the rules to the lines of `chunk`, the log's bytes from offset `at` (the
        end of the lines fed so far). Only the last chunk (`final`) may end inside a
        line: that line is checked, and nothing can be fed after it."""
        if not chunk:
            return
        assert at == self.length and self.last_line is None
        lines = chunk.split(b"\n")
        terminated = lines[-1] == b""
        if terminated:
            lines.pop()
        elif not final:
            raise ValueError("only the final chunk may end inside a line")
        self.offsets.extend(line_starts(at, lines[:-1]))
        number = self.line_count
        self.line_count += len(lines)
        if terminated:
            self.length = at + len(chunk)
        else:
            self.length = self.offsets[-1]
        # the lines fed before this chunk: in the saved part too once there are keys
        first_line = self.first_line if self.keys else self.first.get
        errors, listeners, on_event = self.errors, self.listeners, self._event
        ok = False
        for raw in lines:
            number += 1
            try:
                event, canonical = parse_canonical(raw, number)
            except EnvelopeError as exc:
                errors.append((number, str(exc)))
                ok = False
                continue
            except RecursionError:
                errors.append((number, "JSON nested too deeply"))
                ok = False
                continue
            ok = True
            on_event(event, canonical, number, first_line)  # asks only about earlier lines
            for listener in listeners:
                listener(event)
        if not terminated:
            self.last_line = (number, self.offsets[-1], ok)

    def _event(self, e: Event, canonical: bool, n: int,
               first_line: Callable[[str], int | None]) -> None:
        eid, kind, cause, payload = e.id, e.kind, e.causation_id, e.payload
        # check 1
        if not canonical:
            problem = roundtrip_problem(e)
            if problem:
                self.roundtrip.append((n, problem))
        # check 5, against the lines before this one
        prior = first_line(eid)
        if prior is not None:
            self.causation.append((n, 0, reused_id(eid, prior), None, None))
            self.dups.setdefault(eid, []).append(n)
        if cause is None:
            if not is_root_kind(kind):
                self.causation.append((n, 1, root_problem(e), None, None))
            first_cause = None
        elif cause == eid:
            self.causation.append((n, 1, self_cause(eid), None, None))
            first_cause = n if prior is None else prior  # this line, once it counts
        else:
            first_cause = first_line(cause)
            if first_cause is None:
                self.causation.append((n, 1, None, eid, cause))  # rendered with the later line
        if prior is None:
            self.first[eid] = n
            if kind == OPS_KIND:
                self.ops_first.add(eid)
        # check 7
        if kind == OPS_KIND:
            if cause is not None:
                # an ops event must name its domain event: decided now, or when it comes
                if first_cause is None:
                    self.chained.append((n, None, eid, cause))
                elif (cause in self.ops_first if first_cause > self.old_lines
                      else self.first_is_ops(cause, first_cause)):
                    self.chained.append((n, chained_ops(eid, cause), None, None))
                if self.keys or cause in self.groups:
                    for group in self._groups_for(cause):
                        group.claim(n, e)
                claims = self.claims.get(cause)
                if claims is None:
                    self.claims[cause] = [n]
                else:
                    claims.append(n)
            else:
                self._ops_only(n, eid, payload)
            self._ops(e, n)  # checks 2 and 3
            return
        if kind in ENTITY_CREATING:
            entity = entity_id(kind, payload)
            if entity is not None and (self.entity_creator(entity) if self.keys
                                       else self.entities.get(entity)) is None:
                self.entities[entity] = (n, eid)
                restaters = self.ops_only.get(entity)
                if self.keys or restaters:
                    for line, position, restater in self.old_ops_only(entity) + \
                            (restaters or []):
                        self.restated.append((line, position, restates(restater, entity, eid)))
            self._group(e, n)

    def _ops_only(self, n: int, eid: str, payload: Any) -> None:
        for position, node in enumerate(created_node_ids(payload)):
            if type(node) is not str:
                continue
            self.ops_only.setdefault(node, []).append((n, position, eid))
            creator = self.entity_creator(node)
            if creator is not None:
                self.restated.append((n, position, restates(eid, node, creator[1])))

    def _ops(self, e: Event, n: int) -> None:
        payload = e.payload
        if type(payload) is not list:
            self.skips.append((n, False, skipped_op(e.id, 0, "payload must be an array of ops")))
            return
        vocab, nodes, keys = self.vocab, self.nodes, self.keys
        node_kinds, relations, required = vocab.node_kinds, vocab.relations, \
            vocab.required_props
        for i, op in enumerate(payload, 1):
            # parse_op, at once for the well-formed ops of the three common shapes
            tag = body = None
            if type(op) is dict and len(op) == 1:
                ((tag, body),) = op.items()
                if type(body) is dict:
                    keys_of = body.keys()
                    if tag == "CreateNode":
                        if not (keys_of == _CREATE_NODE and type(body["id"]) is str
                                and type(body["kind"]) is str and type(body["props"]) is dict):
                            tag = None
                    elif tag == "CreateRelation":
                        if not (keys_of == _CREATE_RELATION and type(body["from"]) is str
                                and type(body["rel"]) is str and type(body["to"]) is str
                                and type(body["props"]) is dict):
                            tag = None
                    elif tag == "UpdateNode":
                        if not (keys_of == _UPDATE_NODE and type(body["id"]) is str
                                and type(body["props"]) is dict):
                            tag = None
                    else:
                        tag = None
                else:
                    tag = None
            if tag is None:
                try:
                    tag, body = parse_op(op)
                except OpError as exc:
                    self.skips.append((n, False, skipped_op(e.id, i, str(exc))))
                    continue
            if tag == "CreateNode":
                kind = body["kind"]
                self.kinds.add(kind)
                node = body["id"]
                if node not in nodes and not (keys and self._old_node(node)):
                    nodes[node] = n
                if kind in node_kinds and kind not in required:
                    continue  # no vocabulary problem (vocabulary_problems yields none)
            elif tag == "CreateRelation":
                rel = body["rel"]
                self.rels.add(rel)
                if rel in relations:
                    continue  # no vocabulary problem
            elif tag in NEEDS_NODE and body["id"] not in nodes and not (
                    keys and self._old_node(body["id"])):  # not node_exists
                self.skips.append((n, True, skipped_op(
                    e.id, i, missing_node_reason(tag, body["id"]), True)))
                continue
            else:
                continue
            for problem in vocabulary_problems(e.id, i, tag, body, vocab):
                self.vocab_failures.append((n, problem))

    def _group(self, e: Event, n: int) -> None:
        subject = pairing_subject(e.payload)
        if subject is None:
            self.pairing[n] = [(n, no_payload_id(e.kind, e.id))]
            return
        group = Group(n, e.kind, e.id, subject)
        claims = self.claims.get(e.id)
        if self.keys:
            claims = self.old_claim_lines(e.id) + (claims or [])
        for line in claims or ():
            pair = self.event_at(line)
            if pair is not None:
                group.claim(line, pair)
        self.groups.setdefault(e.id, []).append(group)

    def _groups_for(self, cause: str) -> list[Group]:
        """The groups a new claim on `cause` joins: those fed since the saved part, and
        (from now on, recomputed) the saved lines' entity events with that id."""
        groups = self.groups.setdefault(cause, [])
        if self.keys and cause not in self.reopened:
            self.reopened.add(cause)
            claims = self.old_claim_lines(cause)
            for line in self.old_entity_lines(cause):
                event = self.event_at(line)
                subject = pairing_subject(event.payload) if event is not None else None
                if event is None or subject is None:
                    continue  # its finding does not depend on claims
                group = Group(line, event.kind, event.id, subject)
                for at in claims:
                    pair = self.event_at(at)
                    if pair is not None:
                        group.claim(at, pair)
                groups.append(group)
                self.reopened_lines.add(line)
        return groups

    # ---- lines and facts

    def raw_line(self, n: int) -> bytes:
        """Line `n` (1-based, fed already) without its newline."""
        start = self.offsets[n - 1]
        if n < len(self.offsets):
            end = self.offsets[n] - 1
        elif self.last_line is None:
            end = self.length - 1
        else:
            end = self.source.size
        return self.source.read(start, end)

    def event_at(self, n: int) -> Event | None:
        """The event on line `n`, or None when that line is not a valid envelope."""
        if n in self._events:
            return self._events[n]
        try:
            event: Event | None = parse_line(self.raw_line(n), n)
        except (EnvelopeError, RecursionError):
            event = None
        if n <= self.old_lines:
            self._events[n] = event
        return event

    def _old_lookup(self, table: int, text: str, find: Callable[[str], Any]) -> Any:
        if not self.keys:
            return None
        found = self._old.get((table, text), _UNKNOWN)
        if found is _UNKNOWN:
            found = self._old[(table, text)] = find(text)
        return found

    def _old_events(self, table: int, text: str) -> Iterator[tuple[int, Event]]:
        for line in candidates(self.keys, table, text):
            event = self.event_at(line)
            if event is not None:
                yield line, event

    def first_line(self, eid: Any) -> int | None:
        """The first line of an event with id `eid` fed so far, or None."""
        if type(eid) is not str:
            return None
        if self.keys:
            found = self._old_lookup(FIRST, eid, lambda x: next(
                (line for line, e in self._old_events(FIRST, x) if e.id == x), None))
            if found is not None:
                return found
        return self.first.get(eid)

    def first_is_ops(self, eid: str, line: int) -> bool:
        """Whether the first event with id `eid` (on `line`) is an ops event."""
        if line > self.old_lines:
            return eid in self.ops_first
        event = self.event_at(line)
        return event is not None and event.kind == OPS_KIND

    def entity_creator(self, entity: str) -> tuple[int, str] | None:
        """(line, event id) of the first domain event creating `entity`, or None."""
        if self.keys:
            found = self._old_lookup(ENTITY, entity, lambda x: next(
                ((line, e.id) for line, e in self._old_events(ENTITY, x)
                 if entity_id(e.kind, e.payload) == x), None))
            if found is not None:
                return found
        return self.entities.get(entity)

    def _old_node(self, node: str) -> bool:
        if not self.keys:
            return False

        def created(x: str) -> bool:
            for _line, e in self._old_events(NODE, x):
                if e.kind == OPS_KIND and type(e.payload) is list:
                    for op in e.payload:
                        try:
                            tag, body = parse_op(op)
                        except OpError:
                            continue
                        if tag == "CreateNode" and body["id"] == x:
                            return True
            return False
        return bool(self._old_lookup(NODE, node, created))

    def node_exists(self, node: str) -> bool:
        """Whether a well-formed CreateNode of `node` was fed (check 2's fold)."""
        return node in self.nodes or self._old_node(node)

    def old_claim_lines(self, cause: str) -> list[int]:
        """The saved lines holding an ops event whose causation_id is `cause`."""
        if not self.keys:
            return []
        return [line for line, e in self._old_events(CLAIM, cause)
                if e.kind == OPS_KIND and e.causation_id == cause]

    def old_ops_only(self, node: str) -> list[tuple[int, int, str]]:
        """(line, position, event id) of each CreateNode of `node` in a saved ops-only
        event (position: among the event's CreateNode ops)."""
        if not self.keys:
            return []
        out = []
        for line, e in self._old_events(OPS_ONLY, node):
            if e.kind == OPS_KIND and e.causation_id is None:
                out += [(line, position, e.id)
                        for position, n in enumerate(created_node_ids(e.payload)) if n == node]
        return out

    def old_entity_lines(self, eid: str) -> list[int]:
        """The saved lines holding an entity-creating event with id `eid`."""
        lines = {line for table in (FIRST, DUP) for line, e in self._old_events(table, eid)
                 if e.id == eid and e.kind in ENTITY_CREATING}
        return sorted(lines)

    # ---- the saved form

    def new_keys(self) -> list[int]:
        """The keys of the facts fed since the saved part."""
        out = [key(FIRST, eid) | line for eid, line in self.first.items()]
        out += [key(DUP, eid) | line for eid, lines in self.dups.items() for line in lines]
        out += [key(CLAIM, cause) | line for cause, lines in self.claims.items()
                for line in lines]
        out += [key(ENTITY, entity) | line for entity, (line, _) in self.entities.items()]
        out += [key(OPS_ONLY, node) | line for node, occurrences in self.ops_only.items()
                for line in {at for at, _, _ in occurrences}]
        out += [key(NODE, node) | line for node, line in self.nodes.items()]
        return out

    def all_keys(self) -> array:
        return merged(self.keys, self.new_keys())

    def pairing_findings(self) -> dict[int, list[Line]]:
        """Check 7's pairing problems by entity line, the open groups rendered."""
        out = {line: items for line, items in self.pairing.items()
               if line not in self.reopened_lines}
        for groups in self.groups.values():
            for group in groups:
                items = group.problems()
                if items:
                    out[group.line] = items
        return out
