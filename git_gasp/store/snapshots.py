"""Snapshots on disk: find the newest valid one, write a new one atomically."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from git_gasp.protocol.envelope import EnvelopeError, parse_line
from git_gasp.protocol.graph import Graph
from git_gasp.protocol.jsonstrict import JsonError, loads_slow
from git_gasp.protocol.snapshot import (
    Integrity,
    SnapshotError,
    integrity_for,
    parse_snapshot,
    prefix_bytes,
    verify_integrity,
)
from git_gasp.store.agentfs import AgentFileError, read_regular

SNAPSHOT_DIR = "snapshots"
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]*$")


@dataclass
class Seed:
    """A verified snapshot to fold forward from."""

    path: str
    graph: Graph
    integrity: Integrity


def _event_id_of_line(log: bytes, prefix_len: int) -> str | None:
    """The id of the event on the last line of log[:prefix_len], or None if it is invalid."""
    start = log.rfind(b"\n", 0, prefix_len - 1) + 1
    try:
        return parse_line(log[start : prefix_len - 1]).id
    except EnvelopeError:
        return None


def find_seed(root: Path, log: bytes, upto_line: int | None = None) -> tuple[Seed | None,
                                                                             list[str]]:
    """The newest snapshot at or before `upto_line` whose integrity matches the raw log.

    Only the snapshot's prefix bytes are hashed and its last line parsed, so a caller can
    fold just the tail. Returns (seed or None, notes about snapshots passed over).
    """
    notes: list[str] = []
    base = root / SNAPSHOT_DIR
    if not base.is_dir() or base.is_symlink():
        return None, notes
    best: Seed | None = None
    for name in sorted(os.listdir(base)):
        rel = f"{SNAPSHOT_DIR}/{name}/graph.json"
        if not (base / name / "graph.json").exists():
            continue
        try:
            graph, rec = parse_snapshot(loads_slow(read_regular(root, rel)))
        except (AgentFileError, JsonError, SnapshotError) as exc:
            notes.append(f"{rel} ignored: {exc}")
            continue
        if upto_line is not None and rec.line_count > upto_line:
            continue
        if best and best.integrity.line_count >= rec.line_count:
            continue
        prefix = prefix_bytes(log, rec.line_count)
        last_id = _event_id_of_line(log, len(prefix)) if prefix else None
        reason = verify_integrity(log, rec, last_id)
        if reason:
            notes.append(f"{rel} ignored (integrity does not match: {reason}); full fold used")
            continue
        best = Seed(rel, graph, rec)
    return best, notes


def write_snapshot(root: Path, log: bytes, graph: Graph, line_count: int, event_id: str) -> tuple[
        str, bool]:
    """Write snapshots/<event_id>/graph.json; return (relative path, created?).

    An identical existing snapshot is left alone (created=False); a different one is
    never overwritten (SnapshotError).
    """
    if not _SAFE_ID.match(event_id) or event_id in (".", ".."):
        raise SnapshotError(f"event id {event_id!r} cannot name a snapshot directory")
    rec = integrity_for(log, line_count, event_id)
    doc = {"graph": graph.to_json(), "integrity": rec.to_json()}
    data = (json.dumps(doc, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
            + "\n").encode("utf-8")
    rel = f"{SNAPSHOT_DIR}/{event_id}/graph.json"
    target = root / rel
    if target.exists() or target.is_symlink():
        try:
            existing = target.read_bytes()
        except OSError as exc:
            raise SnapshotError(f"{rel} exists and cannot be read: {exc.strerror}") from None
        if existing == data:
            return rel, False
        raise SnapshotError(f"{rel} already exists with different content; not overwritten")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".graph.json.{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, target)
    return rel, True
