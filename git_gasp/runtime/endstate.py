"""The fold at the log's end, kept under the git dir for the next open of the same log.

A live hook (``adapters/agent_hook_queue.py``) opens the state, appends a few events and
exits; the next hook, a second later, would parse and fold every line since the last
snapshot again (a session's whole log, when nothing snapshots it: linear per hook,
quadratic per session). So the hook saves what it folded, in
``<gitdir>/gasp/end-state/<agent>-<log>.bin`` (never committed):

    header: format, Python and marshal version, the CRC-32 of the log's first `size`
            bytes, `size`, their line count, a CRC-32 and the length of the payload
    payload: marshal of (log path, last event id, the graph's nodes, relations and
             version, node id -> creating event id, every event id)

An open that asks for it (``AgentState.open(..., end_state=True)``) checksums the log's
first `size` bytes again and uses the entry only when they are the bytes it was saved
from, then parses and folds only the lines after them. Anything else (no entry, another
Python, a corrupt or truncated entry, a log that shrank or was rewritten, a torn tail)
returns None and the open reads the log as before, so the entry makes an open faster,
not different: the same graph, creator index, event ids and open run. An entry is only
written from a state whose fold skipped nothing (skipped ops are not kept), and an open
from it repeats no note of the snapshot seed it was first folded from.

Why CRC-32 and not sha256: the entry is a local cache that only the hook's own opens
read, never a check (`git gasp check` and the server hook read the log itself); a
rewrite of the log that kept its length and CRC-32 by accident is a 1 in 2**32 event,
and whoever can craft one can write the entry too. sha256 of a 1 MB log costs the hook
about 30 M instructions (callgrind) and its ``hashlib`` import 12 M more; zlib's CRC-32
about 5 M (`bench/README.md`, seventh session).
"""

from __future__ import annotations

import os
import zlib
from typing import Any

from git_gasp.base.fileops import AtomicFile, UnsafePath, open_regular, read_regular_file
from git_gasp.base.files import MAX_FILE
from git_gasp.base.gitdir import find_git_dir
from git_gasp.protocol import savedentry as entries
from git_gasp.protocol.graph import Graph

DIR = ("gasp", "end-state")
_MAGIC = b"gasp-end-state/1"


class EndState:
    """An entry verified against the log: the fold of its first `size` bytes."""

    __slots__ = ("graph", "creator", "event_ids", "size", "line_count", "last_event_id",
                 "data")

    def __init__(self, graph: Graph, creator: dict[str, str], event_ids: set[str],
                 size: int, line_count: int, last_event_id: str | None, data: bytes) -> None:
        self.graph = graph
        self.creator = creator
        self.event_ids = event_ids
        self.size = size
        self.line_count = line_count
        self.last_event_id = last_event_id
        self.data = data  # the whole log as read (the tail after `size` is still to parse)


def entry_path(gitdir: str | os.PathLike, root: str | os.PathLike, rel: str) -> str:
    """Where the end state of log `rel` of the agent at `root` is kept."""
    agent = zlib.crc32(os.fsencode(os.path.realpath(root)))
    return os.path.join(gitdir, *DIR, f"{agent:08x}-{zlib.crc32(rel.encode()):08x}.bin")


def _read(path: str | os.PathLike) -> bytes | None:
    try:  # a link or a FIFO put in its place is no entry (NotARegularFile is an OSError)
        return read_regular_file(path, limit=MAX_FILE)
    except OSError:
        return None


# log path -> (size, CRC-32 of its first `size` bytes) as this process last read them
_verified: dict[str, tuple[int, int]] = {}


def _prefix_crc(path: str | os.PathLike, size: int) -> int | None:
    """The CRC-32 of the first `size` bytes of the log at `path` (None: it is shorter or
    unreadable). Extends the CRC this process verified or wrote for a shorter prefix
    (the hook's open checked the log up to the end state it loaded; saving it again
    after appending reads only the lines appended since, not the whole log twice); the
    next open checks the entry against the log itself either way."""
    name = os.fspath(path)
    start, crc = _verified.get(name, (0, 0))
    if start > size:
        start, crc = 0, 0
    try:
        fd = open_regular(name)
    except OSError:
        return None
    try:
        os.lseek(fd, start, os.SEEK_SET)
        left = size - start
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                return None
            crc = zlib.crc32(chunk, crc)
            left -= len(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    _verified[name] = (size, crc)
    return crc


def load(root: str | os.PathLike, rel: str, log_path: str | os.PathLike) -> EndState | None:
    """The saved end state of log `rel`, when the log still starts with the bytes it was
    saved from (else None: read the log as before)."""
    gitdir = find_git_dir(root)
    blob = _read(entry_path(gitdir, root, rel)) if gitdir is not None else None
    entry = entries.decode(blob, _MAGIC, 7) if blob else None
    if entry is None:
        return None
    data = _read(log_path)
    digest, size = entry.prefix_crc, entry.size
    if data is None or entries.prefix_crc(data, size) != digest:
        return None
    _verified[os.fspath(log_path)] = (size, digest)
    _rel, last, nodes, relations, version, creator, event_ids = entry.payload
    if (_rel != rel or type(nodes) is not dict or type(relations) is not list
            or type(version) is not int or type(creator) is not dict
            or type(event_ids) is not list or not (last is None or type(last) is str)):
        return None
    graph = Graph()
    graph.nodes, graph.relations, graph.version = nodes, relations, version
    return EndState(graph, creator, set(event_ids), size, entry.lines, last, data)


def save(state: Any) -> str | None:
    """Keep `state`'s fold (an AgentState that holds the lease) for the next open of its
    log; returns why it was not kept, or None. Failures only cost the entry."""
    if state.skipped:
        return "the fold skipped ops"
    store = state.store
    gitdir = find_git_dir(state.root)
    digest = _prefix_crc(store.path, store.size) if gitdir is not None else None
    if digest is None:
        return "the log or the git dir cannot be read"
    state._ensure_full_index()
    graph = state.graph
    try:
        blob = entries.encode(_MAGIC, digest, store.size, store.line_count, (
            store.rel, state.last_event_id, graph.nodes, graph.relations, graph.version,
            state._creator, list(state._event_ids)))
    except ValueError as exc:  # a value marshal cannot hold: no entry, no harm
        return f"not written ({exc})"
    entry = entry_path(gitdir, state.root, store.rel)
    try:
        os.makedirs(os.path.dirname(entry), exist_ok=True)
        with AtomicFile(entry, root=gitdir, durable=False) as fh:  # a cache: rebuilt if lost
            fh.write(blob)
    except (OSError, ValueError, UnsafePath) as exc:
        return f"not written ({exc})"
    return None
