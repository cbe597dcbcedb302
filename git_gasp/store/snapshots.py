"""Snapshots on disk: find the newest valid one, write a new one atomically."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from git_gasp.base.errors import GaspError
from git_gasp.base.files import SMALL_FILE, atomic_write, open_file, read_file
from git_gasp.base.gitdir import find_git_dir
from git_gasp.base.record import Record as Value
from git_gasp.odb.blobid import blob_id
from git_gasp.protocol.envelope import EnvelopeError, parse_line, parse_log
from git_gasp.protocol.fold import fold
from git_gasp.protocol.graph import Graph
from git_gasp.protocol.jsonstrict import JsonError, dumps_canonical, loads_slow
from git_gasp.protocol.snapshot import (
    Integrity,
    SnapshotError,
    integrity_for,
    line_offset,
    parse_snapshot,
)
from git_gasp.store.agentfs import AgentFileError, read_regular

SNAPSHOT_DIR = "snapshots"
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]*$")
# The integrity record closes every snapshot we write (sorted keys): read it from the
# file's last bytes instead of parsing the whole document of every candidate.
_TAIL = re.compile(
    rb'"integrity":\{"event_id":"([^"\\]+)","line_count":(\d{1,18}),'
    rb'"sha256":"([0-9a-fA-F]{64})"\}\}\s*$')
_TAIL_BYTES = 512


class Seed(Value):
    """A verified snapshot to fold forward from."""

    FIELDS = ("path", "graph", "integrity", "offset", "source_sha256")

    def __init__(self, path: str, graph: Graph, integrity: Integrity, offset: int,
                 source_sha256: str | None = None) -> None:
        self.path = path
        self.graph = graph
        self.integrity = integrity
        self.offset = offset  # byte offset just past the lines the snapshot covers
        self.source_sha256 = source_sha256  # of the graph.json bytes the graph was loaded from


# --- a snapshot is never an authority ----------------------------------------
# Its integrity record only says which log prefix it claims to be the fold of; anyone can
# edit the graph and keep the record. So the first time a clone seeds from a snapshot its
# graph is checked against the fold of that prefix, and the verdict is kept under the git
# dir (never committed), keyed by the git blob id of the graph.json bytes.
VERDICT_DIR = ("gasp", "snapshot-verdicts")
_OK, _FORGED = b"ok\n", b"differs\n"


def _verdict_path(root: Path, blob: str) -> Path | None:
    gitdir = find_git_dir(root)
    return None if gitdir is None else Path(gitdir, *VERDICT_DIR, blob)


def _remember(root: Path, blob: str, verdict: bytes) -> None:
    path = _verdict_path(root, blob)
    if path is None:
        return
    try:
        atomic_write(path, verdict, root=path.parents[2], make_parents=True, durable=False)
    except (OSError, GaspError):
        pass  # only costs a second verification later


def graph_matches_prefix(root: Path, log: bytes, offset: int, graph: Graph,
                         raw: bytes) -> bool:
    """True when `graph` (loaded from the graph.json bytes `raw`) equals the fold of
    log[:offset]; the verdict is remembered in the git dir, keyed by raw's blob id."""
    blob = blob_id(raw).decode()
    path = _verdict_path(root, blob)
    if path is not None:
        try:
            known = read_file(path, limit=SMALL_FILE)
        except OSError:
            known = None
        if known in (_OK, _FORGED):
            return known == _OK
    parsed = parse_log(bytes(log[:offset]))
    ok = not parsed.errors and fold(parsed.events).graph.same_as(graph)
    _remember(root, blob, _OK if ok else _FORGED)
    return ok


def _event_id_of_line(log: bytes, prefix_len: int) -> str | None:
    """The id of the event on the last line of log[:prefix_len], or None if it is invalid."""
    start = log.rfind(b"\n", 0, prefix_len - 1) + 1
    try:
        return parse_line(log[start : prefix_len - 1]).id
    except EnvelopeError:
        return None


def load_document(data: bytes) -> object:
    """Parse a graph.json strictly (no duplicate keys, NaN or oversized integers).

    The canonical bytes we write are recognised by re-encoding (orjson, fast); anything
    else takes the strict stdlib path. Raises JsonError.
    """
    try:
        import orjson
    except ImportError:  # pragma: no cover
        return loads_slow(data)
    try:
        value = orjson.loads(data)
        if orjson.dumps(value, option=orjson.OPT_SORT_KEYS) + b"\n" == data:
            return value
    except (orjson.JSONDecodeError, TypeError, RecursionError):
        pass
    return loads_slow(data)


def read_integrity(path: Path) -> Integrity | None:
    """The integrity record of a graph.json, read from its tail (None: parse it whole)."""
    with open_file(path) as fh:
        size = os.fstat(fh.fileno()).st_size
        fh.seek(max(0, size - _TAIL_BYTES))
        match = _TAIL.search(fh.read())
    if match is None:
        return None
    return Integrity(match.group(1).decode(), int(match.group(2)), match.group(3).decode())


def candidates(root: Path, notes: list[str]) -> list[tuple[int, str, Integrity, tuple | None]]:
    """(line_count, rel, integrity, parsed document or None) of every snapshot, most
    lines first. A document whose record is not where we write it is parsed whole."""
    base = root / SNAPSHOT_DIR
    if not base.is_dir() or base.is_symlink():
        return []
    found = []
    for name in os.listdir(base):
        rel = f"{SNAPSHOT_DIR}/{name}/graph.json"
        path = base / name / "graph.json"
        if path.is_symlink() or not path.is_file():
            if path.is_symlink():
                notes.append(f"{rel} ignored: it is a symlink")
            continue
        doc = None
        try:
            rec = read_integrity(path)
            if rec is None:
                doc = parse_snapshot(load_document(read_regular(root, rel)), copy=False)
                rec = doc[1]
        except OSError as exc:
            notes.append(f"{rel} ignored: {exc.strerror}")
            continue
        except (AgentFileError, JsonError, SnapshotError) as exc:
            notes.append(f"{rel} ignored: {exc}")
            continue
        found.append((rec.line_count, rel, rec, doc))
    found.sort(key=lambda c: (c[0], c[1]), reverse=True)
    return found


def find_seed(root: Path, log: bytes, upto_line: int | None = None, *,
              total: int | None = None) -> tuple[Seed | None, list[str]]:
    """The snapshot covering the most lines (at most `upto_line`) whose integrity matches
    the raw log.

    Only the snapshot's prefix bytes are hashed and its last line parsed, so a caller can
    fold just the tail; only the winner's graph is loaded. `total` is the log's line
    count when the caller has it. Returns (seed or None, notes about snapshots passed
    over).
    """
    notes: list[str] = []
    found = candidates(root, notes)
    if not found:
        return None, notes
    if total is None:
        total = log.count(b"\n")
    limit = total if upto_line is None else min(upto_line, total)
    view = memoryview(log)
    for line_count, rel, rec, doc in found:
        if line_count < 1:
            notes.append(f"{rel} ignored: integrity.line_count must be a positive integer")
            continue
        if line_count > limit:
            continue
        offset = line_offset(log, rec.line_count, total)
        reason = None
        if offset is None:
            reason = f"integrity names {rec.line_count} lines but the log is shorter"
        elif hashlib.sha256(view[:offset]).hexdigest() != rec.sha256.lower():
            reason = f"sha256 of the first {rec.line_count} lines does not match (log rewritten?)"
        else:
            last = _event_id_of_line(log, offset)
            if last != rec.event_id:
                reason = f"line {rec.line_count} is event {last!r}, not {rec.event_id!r}"
        if reason:
            notes.append(f"{rel} ignored (integrity does not match: {reason}); full fold used")
            continue
        source = None
        try:
            raw = read_regular(root, rel)
            if doc is None:
                doc = parse_snapshot(load_document(raw), copy=False)
                if doc[1] != rec:
                    notes.append(f"{rel} ignored: its integrity record is not the last member")
                    continue
                source = hashlib.sha256(raw).hexdigest()
        except (AgentFileError, JsonError, SnapshotError) as exc:
            notes.append(f"{rel} ignored: {exc}")
            continue
        if not graph_matches_prefix(root, log, offset, doc[0], raw):
            notes.append(f"warning: {rel} is not trusted: its graph differs from the fold of "
                         f"the log's first {rec.line_count} lines (edited after it was "
                         "written?); folded from the log instead")
            continue
        return Seed(rel, doc[0], rec, offset, source), notes
    return None, notes
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
    data = dumps_canonical(doc) + b"\n"
    rel = f"{SNAPSHOT_DIR}/{event_id}/graph.json"
    target = root / rel
    if target.exists() or target.is_symlink():
        try:
            existing = read_file(target, root=root)
        except OSError as exc:
            raise SnapshotError(f"{rel} exists and cannot be read: {exc.strerror}") from None
        if existing == data:
            return rel, False
        raise SnapshotError(f"{rel} already exists with different content; not overwritten")
    made = not os.path.lexists(target.parent)
    try:
        atomic_write(target, data, root=root, make_parents=True)  # a link on the way: UnsafePath
    except BaseException:
        if made:  # never leave a snapshots/<id>/ without graph.json behind
            try:
                os.rmdir(target.parent)
            except OSError:
                pass
        raise
    _remember(root, blob_id(data).decode(), _OK)  # built from the fold itself: verified
    return rel, True
