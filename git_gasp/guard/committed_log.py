"""What the log before a commit holds, as far as newly appended events need to know.

The guard checks only appended lines, but causation (check 5) and pairing (check 7)
depend on earlier events. `CommittedLog` indexes the committed log leniently (it was
committed already; its own faults are not this commit's): for every line that parses
on its own as a JSON object with a string ``id``, which ids exist (first line), which
ops events claim which cause, which entity each domain event creates first, which
nodes ops-only events create first.

The index is a sorted array of 64-bit keys (table, crc32 of the id, line: the
mechanic of ``lineindex``, which the checks' saved log state shares) plus the byte
offset of every line: cheap to store (``committed_log_cache``), to load, and to extend with the
lines a commit appends. A key only says where to look: every hit is confirmed by
parsing that one line, so a crc32 collision never gives a wrong answer. Full events
are built only for the lines a new event refers to.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from typing import Any

from git_gasp.conformance.rules import created_node_ids, entity_id
from git_gasp.conformance.saved.lineindex import (
    LINE_MASK,
    MAX_LINES,
    TooLarge,
    candidates,
    check_capacity,
    copy_offsets,
    key,
    line_starts,
    merged,
)
from git_gasp.protocol.envelope import OPS_KIND, EnvelopeError, Event, event_from_json, split_lines
from git_gasp.protocol.gcpause import gc_paused

_Fields = tuple[str, Any, Any, Any]  # id, kind, causation_id, payload

__all__ = ["LINE_MASK", "MAX_LINES", "CommittedLog", "TooLarge"]

FIRST, CLAIM, ENTITY, OPS_ONLY = 1, 2, 3, 4  # the tables


_JSON: tuple[Any, Any] | None = None  # (loads, its error), imported on the first line


def _json() -> tuple[Any, Any]:
    """orjson's loads, imported when a line is first parsed: a guarded commit whose
    committed-log index is saved parses none and never loads it."""
    global _JSON
    try:
        from orjson import JSONDecodeError, loads
    except ImportError:  # pragma: no cover - orjson is a declared dependency
        from json import JSONDecodeError, loads
    _JSON = (loads, JSONDecodeError)
    return _JSON


def _parse(raw: bytes) -> Any:
    """One line's JSON value, or None when the line is not JSON on its own."""
    loads, error = _JSON or _json()
    try:
        return loads(raw)
    except (error, RecursionError, ValueError, UnicodeError):
        return None




def _fields(obj: Any) -> _Fields | None:
    """What the index reads of one leniently parsed line: None unless it is an object
    with a string id."""
    if type(obj) is not dict:
        return None
    eid = obj.get("id")
    if type(eid) is not str:
        return None
    return eid, obj.get("kind"), obj.get("causation_id"), obj.get("payload")


class CommittedLog:
    """Ids, claims and entities of the first `length` bytes of `data` (a committed log,
    or a newer version of it that starts with the committed bytes)."""

    def __init__(self, data: bytes, length: int, line_count: int, keys: array,
                 offsets: array) -> None:
        self.data, self.length, self.line_count = data, length, line_count
        self.keys, self.offsets = keys, offsets  # array('Q'): sorted keys; line start offsets
        self._values: dict[int, Any] = {}
        self._first: dict[str, int | None] = {}
        self.first = _FirstLines(self)  # the id -> first line mapping check 5 consults

    @classmethod
    def empty(cls, data: bytes = b"") -> CommittedLog:
        return cls(data, 0, 0, array("Q"), array("Q"))

    @classmethod
    def build(cls, data: bytes, length: int | None = None) -> CommittedLog:
        """Index the first `length` bytes of `data` (all of it by default)."""
        return cls.empty(data).extended(data, length)

    # ---- extending

    def extended(self, data: bytes, length: int | None = None,
                 events: list[Event] | None = None) -> CommittedLog:
        """This index grown over ``data[self.length:length]``.

        `data` must start with the bytes indexed so far and, when they end inside a
        line, continue with the newline that ends it (the one-parent rule: the caller
        has checked it). `events`: those lines already parsed (strictly, one valid
        envelope per line, in order), so they are not parsed again; ignored unless
        there is one per line. Nothing of `self` changes.
        """
        length = len(data) if length is None else length
        start = self.length
        if start and data[start - 1] != 0x0A:
            start += 1  # the newline that completes the old last line
        lines, _terminated = split_lines(data[start:length]) if start < length else ([], True)
        check_capacity(self.line_count + len(lines))
        offsets = copy_offsets(self.offsets)
        offsets.extend(line_starts(start, lines[:-1]) if lines else ())
        grown = CommittedLog(data, length, self.line_count + len(lines), self.keys, offsets)
        if lines:
            with gc_paused():
                if events is None or len(events) != len(lines):
                    records = map(_fields, map(_parse, lines))
                else:
                    records = ((e.id, e.kind, e.causation_id, e.payload) for e in events)
                grown.keys = merged(self.keys, self._new_keys(records, self.line_count + 1))
        return grown

    def _new_keys(self, records: Iterator[_Fields | None], first_number: int) -> list[int]:
        """The keys the lines (their `_fields`) add: first occurrences only (of ids,
        entities, ops-only nodes), every claim. Mirrors check 5's and check 7's view of
        a log."""
        known = bool(self.keys)
        ids: set[str] = set()
        entities: set[str] = set()
        nodes: set[str] = set()
        out: list[int] = []
        add = out.append
        for number, fields in enumerate(records, first_number):
            if fields is None:
                continue
            eid, kind, cause, payload = fields
            if eid not in ids:
                ids.add(eid)
                if not known or self.first_line(eid) is None:
                    add(key(FIRST, eid) | number)
            if kind == OPS_KIND:
                if cause is None:
                    for node in created_node_ids(payload):
                        if type(node) is str and node not in nodes:
                            nodes.add(node)
                            if not known or self.ops_only_line(node) is None:
                                add(key(OPS_ONLY, node) | number)
                elif type(cause) is str:
                    add(key(CLAIM, cause) | number)
            elif type(kind) is str:
                entity = entity_id(kind, payload)
                if entity is not None and entity not in entities:
                    entities.add(entity)
                    if not known or self.entity_creator(entity) is None:
                        add(key(ENTITY, entity) | number)
        return out

    # ---- reading lines

    def _lines(self, table: int, text: str) -> Iterator[int]:
        """Candidate lines for `text` in `table`, in line order (unconfirmed)."""
        return candidates(self.keys, table, text)

    def raw_line(self, line: int) -> bytes | None:
        """Line `line` (1-based) without its newline, or None when there is none."""
        if not 1 <= line <= self.line_count:
            return None
        start = self.offsets[line - 1]
        end = self.data.find(b"\n", start, self.length)
        return self.data[start:end if end >= 0 else self.length]

    def value(self, line: int) -> Any:
        """Line `line` parsed leniently (None when it is not JSON or not there)."""
        if line not in self._values:
            raw = self.raw_line(line)
            self._values[line] = None if raw is None else _parse(raw)
        return self._values[line]

    def _object(self, line: int) -> dict | None:
        """The line's JSON object when it has a string id (the lines the index covers)."""
        obj = self.value(line)
        if type(obj) is dict and type(obj.get("id")) is str:
            return obj
        return None

    # ---- the facts

    def first_line(self, event_id: str) -> int | None:
        """The first line holding an event with `event_id`, or None."""
        if type(event_id) is not str:
            return None
        if event_id not in self._first:
            found = None
            for line in self._lines(FIRST, event_id):
                obj = self._object(line)
                if obj is not None and obj["id"] == event_id:
                    found = line
                    break
            self._first[event_id] = found
        return self._first[event_id]

    def claim_lines(self, cause_id: str) -> list[int]:
        """Lines of the ops events whose causation_id is `cause_id`, in order."""
        out = []
        for line in self._lines(CLAIM, cause_id):
            obj = self._object(line)
            if obj is not None and obj.get("kind") == OPS_KIND \
                    and obj.get("causation_id") == cause_id:
                out.append(line)
        return out

    def entity_creator(self, entity: str) -> str | None:
        """The id of the first domain event creating `entity`, or None."""
        if type(entity) is not str:
            return None
        for line in self._lines(ENTITY, entity):
            obj = self._object(line)
            if obj is None:
                continue
            kind = obj.get("kind")
            if kind != OPS_KIND and type(kind) is str \
                    and entity_id(kind, obj.get("payload")) == entity:
                return obj["id"]
        return None

    def ops_only_line(self, node: str) -> int | None:
        """The line of the first ops-only event with a CreateNode for `node`, or None."""
        if type(node) is not str:
            return None
        for line in self._lines(OPS_ONLY, node):
            obj = self._object(line)
            if obj is not None and obj.get("kind") == OPS_KIND \
                    and obj.get("causation_id") is None \
                    and any(n == node for n in created_node_ids(obj.get("payload"))
                            if type(n) is str):
                return line
        return None

    # ---- events

    def event_at(self, line: int) -> Event | None:
        """The event on 1-based `line`, or None when that line is not a valid envelope."""
        try:
            return event_from_json(self.value(line), line)
        except EnvelopeError:
            return None

    def event(self, event_id: str) -> Event | None:
        """The first event with `event_id`, or None."""
        line = self.first_line(event_id)
        return self.event_at(line) if line is not None else None

    def claim_events(self, cause_id: str) -> list[Event]:
        """The valid ops events claiming `cause_id`, in line order."""
        events = (self.event_at(line) for line in self.claim_lines(cause_id))
        return [e for e in events if e is not None]

    def ops_only_event(self, node: str) -> Event | None:
        line = self.ops_only_line(node)
        return self.event_at(line) if line is not None else None


class _FirstLines:
    """`CommittedLog.first_line` as the read-only mapping check 5's rule takes."""

    def __init__(self, log: CommittedLog) -> None:
        self._log = log

    def __contains__(self, event_id: object) -> bool:
        return type(event_id) is str and self._log.first_line(event_id) is not None

    def __getitem__(self, event_id: str) -> int:
        line = self._log.first_line(event_id) if type(event_id) is str else None
        if line is None:
            raise KeyError(event_id)
        return line

    def get(self, event_id: str, default: int | None = None) -> int | None:
        line = self._log.first_line(event_id) if type(event_id) is str else None
        return default if line is None else line
