"""Snapshot integrity: snapshots/<event-id>/graph.json = {"graph": G, "integrity": {...}}.

`sha256` covers the raw bytes of the first `line_count` physical lines of the log,
newlines included; `event_id` is the id of the last event of that prefix.
"""

from __future__ import annotations

from hashlib import sha256
from typing import Any

from git_gasp.base.errors import FormatError
from git_gasp.base.record import Record
from git_gasp.protocol.graph import Graph, GraphError


class SnapshotError(FormatError):
    """A snapshot document is malformed or does not match the log."""


class Integrity(Record):
    """A snapshot's integrity block: the last event folded, the lines, the log's hash."""

    FIELDS = ("event_id", "line_count", "sha256")

    def __init__(self, event_id: str, line_count: int, sha256: str) -> None:
        self.event_id, self.line_count, self.sha256 = event_id, line_count, sha256

    def to_json(self) -> dict:
        return {"event_id": self.event_id, "line_count": self.line_count, "sha256": self.sha256}


def line_offset(data: bytes, line_count: int, total: int | None = None) -> int | None:
    """Byte offset just past the first `line_count` lines, or None if there are fewer.

    `total` is data's line count when the caller has it (else it is counted). Scans from
    whichever end is nearer, so a prefix ending near the end of a huge log is cheap.
    """
    if line_count <= 0:
        return 0
    if total is None:
        total = data.count(b"\n")
    if line_count > total:
        return None
    if line_count * 2 <= total:
        pos = -1
        for _ in range(line_count):
            pos = data.find(b"\n", pos + 1)
        return pos + 1
    pos = len(data)
    for _ in range(total - line_count + 1):
        pos = data.rfind(b"\n", 0, pos)
    return pos + 1


def prefix_bytes(log: bytes, line_count: int) -> bytes | None:
    """The first `line_count` physical lines (with their newlines), or None if too few."""
    offset = line_offset(log, line_count)
    return None if offset is None else log[:offset]


def integrity_for(log: bytes, line_count: int, event_id: str) -> Integrity:
    """Compute the integrity record of a log prefix."""
    prefix = prefix_bytes(log, line_count)
    if prefix is None:
        raise SnapshotError(f"the log has fewer than {line_count} complete lines")
    return Integrity(event_id, line_count, sha256(prefix).hexdigest())


def parse_snapshot(obj: Any, *, copy: bool = True) -> tuple[Graph, Integrity]:
    """Validate a parsed graph.json document (raises SnapshotError).

    copy=False adopts the document's node records (for a freshly parsed document that
    nothing else holds).
    """
    if type(obj) is not dict or obj.keys() != {"graph", "integrity"}:
        raise SnapshotError('a snapshot must be an object with exactly "graph" and "integrity"')
    rec = obj["integrity"]
    if type(rec) is not dict or rec.keys() != {"event_id", "line_count", "sha256"}:
        raise SnapshotError('integrity must hold exactly "event_id", "line_count", "sha256"')
    if type(rec["event_id"]) is not str or type(rec["sha256"]) is not str:
        raise SnapshotError("integrity.event_id and integrity.sha256 must be strings")
    if type(rec["line_count"]) is not int or rec["line_count"] < 1:
        raise SnapshotError("integrity.line_count must be a positive integer")
    try:
        graph = Graph.from_json(obj["graph"], copy=copy)
    except GraphError as exc:
        raise SnapshotError(str(exc)) from None
    return graph, Integrity(rec["event_id"], rec["line_count"], rec["sha256"])


def verify_integrity(log: bytes, rec: Integrity, last_event_id: str | None) -> str | None:
    """None when the record matches the log; else the reason it does not.

    `last_event_id` is the id of the event on line `rec.line_count` (None if that
    line does not parse).
    """
    prefix = prefix_bytes(log, rec.line_count)
    digest = None if prefix is None else sha256(prefix).hexdigest()
    return integrity_mismatch(rec, digest, last_event_id)


def integrity_mismatch(rec: Integrity, digest: str | None,
                       last_event_id: str | None) -> str | None:
    """`verify_integrity` given the sha256 hex digest of the log's first
    `rec.line_count` lines (None: the log has fewer)."""
    if digest is None:
        return f"integrity names {rec.line_count} lines but the log is shorter"
    if digest != rec.sha256.lower():
        return f"sha256 of the first {rec.line_count} lines does not match (log rewritten?)"
    if last_event_id != rec.event_id:
        return f"line {rec.line_count} is event {last_event_id!r}, not {rec.event_id!r}"
    return None
