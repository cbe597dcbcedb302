"""What the log before a commit holds, as far as newly appended events need to know.

The guard checks only appended lines, but causation (check 5) and pairing (check 7)
depend on earlier events. `OldLog` reads the committed log blob once, leniently
(it was committed already; its own faults are not this commit's), and keeps just
the maps those rules consult. Full events are built only for the lines a new
event actually refers to.
"""

from __future__ import annotations

import gc
from typing import Any

from git_gasp.conformance.rules import created_node_ids, entity_id
from git_gasp.protocol.envelope import OPS_KIND, EnvelopeError, Event, event_from_json, split_lines

try:
    from orjson import JSONDecodeError as _JSONError
    from orjson import loads as _loads
except ImportError:  # pragma: no cover - orjson is a declared dependency
    from json import JSONDecodeError as _JSONError
    from json import loads as _loads


def _parse_all(lines: list[bytes]) -> list[Any]:
    """One value per line (None where a line is not JSON): a single C-level parse
    of the whole log when every line is valid, else line by line.

    The cyclic GC is paused meanwhile: JSON values hold no cycles, and collections
    triggered by ~10^6 new containers that are all kept would dominate the time."""
    if not lines:
        return []
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _parse_all_unguarded(lines)
    finally:
        if enabled:
            gc.enable()


def _parse_all_unguarded(lines: list[bytes]) -> list[Any]:
    try:
        values = _loads(b"[" + b",".join(lines) + b"]")
        # A line holding `1,2` would shift every later value; equal counts rule it out
        # (no line can contribute zero values without failing the parse).
        if type(values) is list and len(values) == len(lines):
            return values
    except (_JSONError, RecursionError, ValueError):
        pass
    out: list[Any] = []
    for raw in lines:
        try:
            out.append(_loads(raw))
        except (_JSONError, RecursionError, ValueError):
            out.append(None)
    return out


class OldLog:
    """Ids, claims and entities of an already committed log."""

    def __init__(self, data: bytes) -> None:
        enabled = gc.isenabled()
        gc.disable()  # see _parse_all: nothing built here holds a cycle
        try:
            self._index(data)
        finally:
            if enabled:
                gc.enable()

    def _index(self, data: bytes) -> None:
        lines, _terminated = split_lines(data)
        self.line_count = len(lines)
        self._values = _parse_all(lines)
        self.first: dict[str, int] = {}  # event id -> first line
        self.claims: dict[str, list[int]] = {}  # causation id -> lines of ops events naming it
        self.entities: dict[str, str] = {}  # entity id -> id of the domain event creating it
        self.ops_only_creates: dict[Any, int] = {}  # node id -> line of an ops-only event
        first, claims, entities = self.first, self.claims, self.entities
        for number, obj in enumerate(self._values, 1):
            if type(obj) is not dict:
                continue
            eid = obj.get("id")
            if type(eid) is not str:
                continue
            first.setdefault(eid, number)
            kind = obj.get("kind")
            if kind == OPS_KIND:
                cause = obj.get("causation_id")
                if cause is None:
                    for node in created_node_ids(obj.get("payload")):
                        if type(node) is str:
                            self.ops_only_creates.setdefault(node, number)
                else:
                    claims.setdefault(cause, []).append(number)
            elif type(kind) is str:
                entity = entity_id(kind, obj.get("payload"))
                if entity is not None:
                    entities.setdefault(entity, eid)

    def event_at(self, line: int) -> Event | None:
        """The event on 1-based `line`, or None when that line is not a valid envelope."""
        try:
            return event_from_json(self._values[line - 1], line)
        except (EnvelopeError, IndexError):
            return None

    def event(self, event_id: str) -> Event | None:
        """The first event with `event_id`, or None."""
        line = self.first.get(event_id)
        return self.event_at(line) if line is not None else None
