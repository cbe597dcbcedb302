"""Opening from a snapshot fast: a local cache of verified snapshot graphs.

The slow path (`store.snapshots.find_seed`) reads the whole log, hashes the raw prefix a
snapshot names and parses that snapshot's graph.json. Parsing 40 MB of JSON into a graph
and counting lines is most of its cost, and neither depends on anything but two files'
bytes. So once a snapshot has been verified that way, what it established is kept under
the git dir (never committed), in `<gitdir>/gasp/snapshot-cache/<agent>-<snapshot>.bin`:

    header: the sha256 of the graph.json bytes, the integrity record, the byte length of
            the prefix the record covers, and a CRC-32 and length of the payload
    payload: in `marshal` form, ({node id: position}, version, [ids of the unfinished
             runs, in node order], three byte lengths), then those three raw sections:
             the nodes marshalled one by one, back to back; their end offsets (uint64,
             native order); the relations marshalled — so an open builds one dict of
             ids and loads a node, or the relations, only when something asks for it
             (`Graph.lazy`), straight from the bytes read

An open with a cache entry for the best snapshot hashes the graph.json and the log prefix
again — the normative check, in a thread, while the cached graph is unmarshalled and the
log's tail is read and parsed — and uses the entry only if both digests are the ones
recorded. Anything else (a changed graph.json, a rewritten log, a corrupt, truncated or
foreign entry, a log that ends in a torn line) returns None and the slow path runs, so the
cache can make an open faster, never different.
"""

from __future__ import annotations

import hashlib
import marshal
import mmap
import os
import re
import sys
import threading
import zlib
from array import array
from pathlib import Path

from git_gasp.base.fileops import AtomicFile, UnsafePath
from git_gasp.base.files import open_file, read_file
from git_gasp.base.gitdir import find_git_dir
from git_gasp.base.record import Record as Value
from git_gasp.protocol.envelope import Event
from git_gasp.protocol.graph import Graph
from git_gasp.runtime.runs import is_unfinished_run
from git_gasp.store.append import LogError, parse_tail
from git_gasp.store.snapshots import Seed, candidates

CACHE_DIR = ("gasp", "snapshot-cache")
_MAGIC = b"gasp-snapshot-cache/2"
_PY = f"py{sys.version_info[0]}.{sys.version_info[1]}-m{marshal.version}".encode()
_HEADER = re.compile(
    rb"gasp-snapshot-cache/2 (\S+) ([0-9a-f]{64}) ([0-9a-f]{64}) (\d{1,18}) (\d{1,18}) "
    rb"([0-9a-f]{8}) (\d{1,18}) ([^\s]+)\n")


class FastOpen(Value):
    """A cached snapshot graph, verified against the files, and the log's tail after it."""

    FIELDS = ("rel", "graph", "running", "line_count", "offset", "event_id", "events", "size",
              "tail_lines")

    def __init__(self, rel: str, graph: Graph, running: list[str], line_count: int, offset: int,
                 event_id: str, events: list[Event], size: int, tail_lines: int) -> None:
        self.rel = rel
        self.graph = graph  # lazy: nodes and relations load on demand
        self.running = running  # unfinished runs of the snapshot's graph, in node order
        self.line_count = line_count  # lines the snapshot covers
        self.offset = offset  # bytes the snapshot covers
        self.event_id = event_id
        self.events = events  # the tail, parsed, line numbers those of the whole log
        self.size = size  # bytes of the log read (offset + tail)
        self.tail_lines = tail_lines


def cache_path(gitdir: Path, root: Path, rel: str) -> Path:
    agent = hashlib.sha256(os.fsencode(os.path.realpath(root))).hexdigest()[:16]
    snap = hashlib.sha256(rel.encode()).hexdigest()[:16]
    return gitdir.joinpath(*CACHE_DIR, f"{agent}-{snap}.bin")


def _digest(path: Path, length: int | None, started: threading.Event) -> str | None:
    """sha256 of the first `length` bytes of `path` (all of it when None), or None if the
    file is shorter or unreadable.

    One hashlib call over a read-only mapping: no 100 MB allocation, and the GIL stays
    released for the whole hash, so it runs beside the unmarshalling (which holds the
    GIL). `started` is set just before that call."""
    try:
        with open_file(path) as fh:
            size = os.fstat(fh.fileno()).st_size
            if length is None:
                length = size
            if size < length or length == 0:
                started.set()
                return hashlib.sha256(b"").hexdigest() if size >= length else None
            with mmap.mmap(fh.fileno(), length, access=mmap.ACCESS_READ) as mapped:
                with memoryview(mapped) as view:
                    started.set()
                    return hashlib.sha256(view).hexdigest()
    except (OSError, ValueError):
        started.set()
        return None


def _read_from(path: Path, offset: int) -> bytes | None:
    try:
        with open_file(path) as fh:
            fh.seek(offset)
            return fh.read()
    except OSError:
        return None


def _discard(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def open_fast(root: Path, log_path: Path, log_rel: str, notes: list[str]) -> FastOpen | None:
    """The best snapshot's graph from the cache, verified, plus the parsed tail; or None.

    None means "use the slow path" (which reaches the same result by itself). A log
    error in the tail is raised only once the prefix is verified (its line numbers
    come from the cache entry).
    """
    found_dir = find_git_dir(root)
    if found_dir is None:
        return None
    gitdir = Path(found_dir)
    scratch: list[str] = []
    found = candidates(root, scratch)
    if not found or found[0][3] is not None or found[0][0] < 1:
        return None
    line_count, rel, rec, _doc = found[0]
    entry = cache_path(gitdir, root, rel)
    try:
        blob = read_file(entry)
    except OSError:
        return None
    head = _HEADER.match(blob)
    if head is None or head.group(1) != _PY:
        _discard(entry)
        return None
    gj_sha, prefix_sha = head.group(2).decode(), head.group(3).decode()
    offset, cached_lines = int(head.group(4)), int(head.group(5))
    crc, length, event_id = int(head.group(6), 16), int(head.group(7)), head.group(8).decode()
    payload = memoryview(blob)[head.end():]
    if len(payload) != length or zlib.crc32(payload) != crc:
        _discard(entry)
        return None
    if (cached_lines, event_id, prefix_sha) != (line_count, rec.event_id, rec.sha256.lower()):
        return None  # the graph.json changed since: its new record decides (slow path)
    try:
        size = os.stat(log_path).st_size
    except OSError:
        return None
    if size < offset:
        return None
    digests: dict[str, str | None] = {}
    started = [threading.Event(), threading.Event()]

    def verify(name: str, path: Path, length: int | None, flag: threading.Event) -> None:
        digests[name] = _digest(path, length, flag)

    # One thread per file: both hashes release the GIL, so they run side by side (and
    # beside the unmarshalling) on a machine with the cores for it.
    workers = [threading.Thread(target=verify, args=args, name="gasp-snapshot-verify",
                                daemon=True)
               for args in (("log", log_path, offset, started[0]),
                            ("graph", root / rel, None, started[1]))]
    for worker in workers:
        worker.start()
    for flag in started:
        flag.wait()  # marshal.loads keeps the GIL: let the workers get into hashlib first
    loaded = events = error = None
    tail = b""
    try:
        loaded = _load_graph(payload)
        tail = _read_from(log_path, offset)
        if tail is not None and (not tail or tail.endswith(b"\n")):
            try:
                events = parse_tail(tail, 0, line_count + 1, log_rel)
            except LogError as exc:
                error = exc
    finally:
        for worker in workers:
            worker.join()
    if digests.get("log") != prefix_sha or digests.get("graph") != gj_sha:
        _discard(entry)
        return None
    if loaded is None:
        _discard(entry)
        return None
    graph, running = loaded
    if tail is None or (tail and not tail.endswith(b"\n")):
        return None  # unreadable or torn: the slow path reports it precisely
    if error is not None:
        raise error
    notes.extend(scratch)
    return FastOpen(rel, graph, running, line_count, offset, event_id, events or [],
                    offset + len(tail), tail.count(b"\n"))


def _dumps_graph(graph: Graph) -> bytes:
    """The cache payload of a fully loaded graph (see the module docstring)."""
    nodes = graph.nodes
    blobs = [marshal.dumps(node) for node in nodes.values()]
    ends = array("Q")
    end = 0
    for blob in blobs:
        end += len(blob)
        ends.append(end)
    index = {key: i for i, key in enumerate(nodes)}
    running = [key for key, node in nodes.items() if is_unfinished_run(node)]
    rels = marshal.dumps(graph.relations)
    raw_ends = ends.tobytes()
    head = marshal.dumps((index, graph.version, running, end, len(raw_ends), len(rels)))
    return b"".join([b"%d\n" % len(head), head, *blobs, raw_ends, rels])


def _load_graph(payload: memoryview) -> tuple[Graph, list[str]] | None:
    """(lazy graph, unfinished run ids) from a cache payload, or None if it is malformed."""
    try:
        cut = bytes(payload[:24]).index(b"\n")
        start = cut + 1 + int(payload[:cut])
        loaded = marshal.loads(payload[cut + 1 : start])
        if type(loaded) is not tuple or len(loaded) != 6:
            return None
        index, version, running, n_blob, n_ends, n_rels = loaded
        if (type(index) is not dict or type(version) is not int or type(running) is not list
                or not all(type(r) is str for r in running)
                or start + n_blob + n_ends + n_rels != len(payload)
                or n_ends != 8 * len(index)):
            return None
        blob = payload[start : start + n_blob]
        ends = payload[start + n_blob : start + n_blob + n_ends].cast("Q")
        rels = payload[start + n_blob + n_ends :]
    except (ValueError, EOFError, TypeError):
        return None
    if index and ends[-1] != n_blob:
        return None
    return Graph.lazy(index, blob, ends, rels, version), running


def save(root: Path, seed: Seed, notes: list[str]) -> None:
    """Cache a seed the slow path has just verified (call before folding onto its graph).

    Only the snapshot that covers the most lines is cached: it is the one an open tries
    first. Failures only cost the cache (a note), never the open.
    """
    found_dir = find_git_dir(root)
    if found_dir is None or seed.source_sha256 is None:
        return
    gitdir = Path(found_dir)
    found = candidates(root, [])
    if not found or found[0][1] != seed.path or found[0][3] is not None:
        return  # open_fast only ever tries the first candidate, in the layout we write
    rec = seed.integrity
    payload = _dumps_graph(seed.graph)
    header = b" ".join([
        _MAGIC, _PY, seed.source_sha256.encode(), rec.sha256.lower().encode(),
        b"%d" % seed.offset, b"%d" % rec.line_count, b"%08x" % zlib.crc32(payload),
        b"%d" % len(payload), rec.event_id.encode()]) + b"\n"
    if not _HEADER.fullmatch(header):
        return  # an event id we cannot put in the header: no cache, no harm
    entry = cache_path(gitdir, root, seed.path)
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        agent = entry.name.split("-", 1)[0]
        for old in entry.parent.glob(f"{agent}-*.bin"):  # one cached snapshot per agent
            if old != entry:
                _discard(old)
        with AtomicFile(entry, root=gitdir, durable=False) as fh:  # a cache: rebuilt if lost
            fh.write(header)
            fh.write(payload)
    except (OSError, ValueError, UnsafePath) as exc:
        notes.append(f"snapshot cache not written ({exc})")
