"""Seeding a fold from a snapshot without parsing the lines it covers.

`store.snapshots.find_seed` needs the whole log parsed (it maps line numbers to
event ids). Opening a long-lived agent must not: here the integrity record is read
from the end of each graph.json, the SHA-256 is taken over the raw prefix bytes,
and only the prefix's last line is parsed to confirm its event id. The graph is
loaded only for the snapshot that wins.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from git_gasp.protocol.envelope import EnvelopeError, parse_line
from git_gasp.protocol.graph import Graph
from git_gasp.protocol.snapshot import SnapshotError, parse_snapshot
from git_gasp.runtime.store import line_offset
from git_gasp.store.snapshots import SNAPSHOT_DIR

_TAIL = re.compile(
    rb'"integrity":\{"event_id":"([^"\\]+)","line_count":(\d+),"sha256":"([0-9a-fA-F]{64})"\}\}'
    rb"\s*$")


@dataclass
class FastSeed:
    rel: str
    graph: Graph
    line_count: int
    offset: int  # byte offset just past the covered lines
    event_id: str


def _loads(data: bytes):
    try:
        import orjson

        return orjson.loads(data)
    except ImportError:  # pragma: no cover
        import json

        return json.loads(data)


def _integrity(data: bytes) -> tuple[str, int, str] | None:
    match = _TAIL.search(data[-400:])
    if match:
        return match.group(1).decode(), int(match.group(2)), match.group(3).decode().lower()
    try:
        _graph, rec = parse_snapshot(_loads(data))
    except (ValueError, SnapshotError):
        return None
    return rec.event_id, rec.line_count, rec.sha256.lower()


def find_fast_seed(root: Path, log: bytes, notes: list[str]) -> FastSeed | None:
    """The snapshot covering the most lines whose integrity matches `log`, or None."""
    base = root / SNAPSHOT_DIR
    if not base.is_dir() or base.is_symlink():
        return None
    total = log.count(b"\n")
    candidates = []
    for name in sorted(os.listdir(base)):
        path = base / name / "graph.json"
        rel = f"{SNAPSHOT_DIR}/{name}/graph.json"
        if path.is_symlink() or not path.is_file():
            continue
        try:
            data = path.read_bytes()
        except OSError as exc:
            notes.append(f"{rel} ignored: {exc.strerror}")
            continue
        rec = _integrity(data)
        if rec is None:
            notes.append(f"{rel} ignored: not a snapshot document")
            continue
        if 0 < rec[1] <= total:
            candidates.append((rec[1], rel, rec, data))
    view = memoryview(log)
    for line_count, rel, (event_id, _n, sha), data in sorted(candidates, reverse=True):
        offset = line_offset(log, line_count)
        if offset is None or hashlib.sha256(view[:offset]).hexdigest() != sha:
            notes.append(f"{rel} ignored (its integrity does not match the log); folded past it")
            continue
        start = log.rfind(b"\n", 0, offset - 1) + 1
        try:
            last = parse_line(log[start:offset - 1], line_count).id
        except EnvelopeError:
            last = None
        if last != event_id:
            notes.append(f"{rel} ignored (line {line_count} is not {event_id})")
            continue
        try:
            graph, _rec = parse_snapshot(_loads(data))
        except (ValueError, SnapshotError) as exc:
            notes.append(f"{rel} ignored: {exc}")
            continue
        return FastSeed(rel, graph, line_count, offset, event_id)
    return None
