"""The log's count (`protocol.logcount`) kept under the git dir, so `git gasp status`
counts only the lines appended since it last counted, not the whole log again.

``<gitdir>/gasp/count/<agent>-<log>.bin`` (named as the end state of
``runtime/endstate.py`` is, never committed) holds

    header: ``protocol/savedentry.py``'s (the CRC-32 of the log's first `size` bytes,
            `size`, their line count …)
    payload: marshal of (log path, domain events, ops events, last event id, its line,
             its kind, every event id)

A count is used only when the log still starts with the bytes it was counted from
(their CRC-32 is checked again, as the end state's is): then only the lines after
them are parsed. Anything else (no entry, another Python, a damaged entry, a log that
shrank or was rewritten, a bad line after the counted bytes) counts the whole log, as
`fold` does, and saves that count. So a saved count makes `status` faster, never
different: every event id is kept, so the last one is shortened among all of them, as
`log` prints it.
"""

from __future__ import annotations

import os
import zlib

from git_gasp.base.fileops import AtomicFile, UnsafePath, read_regular_file
from git_gasp.base.files import MAX_FILE
from git_gasp.base.gitdir import find_git_dir
from git_gasp.protocol import savedentry as entries
from git_gasp.protocol.envelope import OPS_KIND, Event, parse_log
from git_gasp.store.append import LogError, parse_tail

_MAGIC = b"gasp-count/1"


class SavedCount:
    """Events by layer, the last event and every event id of a log's first `size` bytes
    (what `protocol.logcount.LogCount` is built from, with the graph's node count)."""

    __slots__ = ("domain", "ops", "last_id", "last_line", "last_kind", "event_ids", "size",
                 "lines", "fresh")

    def __init__(self, domain: int, ops: int, last: tuple[str | None, int, str | None],
                 event_ids: list[str], size: int, lines: int, fresh: bool) -> None:
        self.domain, self.ops = domain, ops
        self.last_id, self.last_line, self.last_kind = last
        self.event_ids = event_ids
        self.size, self.lines = size, lines
        self.fresh = fresh  # True: read from the whole log (nothing usable was saved)

    def add(self, events: list[Event], size: int, lines: int) -> None:
        """Count `events`, the lines after the counted ones, up to byte `size`."""
        for e in events:
            if e.kind == OPS_KIND:
                self.ops += 1
            else:
                self.domain += 1
            self.event_ids.append(e.id)
        if events:
            last = events[-1]
            self.last_id, self.last_line, self.last_kind = last.id, last.line, last.kind
        self.size, self.lines = size, lines


DIR = ("gasp", "count")


def count_path(gitdir: str | os.PathLike, root: str | os.PathLike, rel: str) -> str:
    """Where the saved count of log `rel` of the agent at `root` is kept."""
    agent = zlib.crc32(os.fsencode(os.path.realpath(root)))
    return os.path.join(gitdir, *DIR, f"{agent:08x}-{zlib.crc32(rel.encode()):08x}.bin")


def _load(path: str, rel: str, data: bytes) -> SavedCount | None:
    """The count saved at `path`, if it was taken of a prefix of `data`."""
    try:  # a link or a FIFO in its place is no entry (NotARegularFile is an OSError)
        blob = read_regular_file(path, limit=MAX_FILE)
    except OSError:
        return None
    entry = entries.decode(blob, _MAGIC, 7) if blob else None
    if entry is None:
        return None
    size, lines = entry.size, entry.lines
    if size and data[size - 1:size] != b"\n" or entries.prefix_crc(data, size) != \
            entry.prefix_crc:
        return None  # the counted bytes were rewritten (or cut): the count is stale
    _rel, domain, ops, last_id, last_line, last_kind, ids = entry.payload
    if (_rel != rel or type(domain) is not int or type(ops) is not int
            or type(last_line) is not int or type(ids) is not list
            or len(ids) != domain + ops or domain + ops != lines
            or not (last_id is None or type(last_id) is str)
            or not (last_kind is None or type(last_kind) is str)):
        return None
    return SavedCount(domain, ops, (last_id, last_line, last_kind), ids, size, lines, False)


def _save(path: str, gitdir: str | os.PathLike, rel: str, count: SavedCount,
          data: bytes) -> None:
    """Keep `count` (of `data`'s first `count.size` bytes); failures cost only the entry."""
    try:
        blob = entries.encode(_MAGIC, entries.prefix_crc(data, count.size) or 0, count.size,
                              count.lines, (rel, count.domain, count.ops, count.last_id,
                                            count.last_line, count.last_kind,
                                            count.event_ids))
    except ValueError:
        return
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with AtomicFile(path, root=gitdir, durable=False) as fh:  # a cache: rebuilt if lost
            fh.write(blob)
    except (OSError, ValueError, UnsafePath):
        pass


def _whole(data: bytes, rel: str) -> SavedCount:
    """The count of every valid event of `data` (as `fold` counts them); saved only when
    every line is one (`lines` then is the event count the saved form checks)."""
    parsed = parse_log(data if isinstance(data, bytes) else bytes(data), rel)  # an mmap too
    count = SavedCount(0, 0, (None, 0, None), [], 0, 0, True)
    count.add(parsed.events, len(data), parsed.line_count)
    if parsed.errors or not parsed.terminated:
        count.size = -1  # not to be saved: a later count must read the log again
    return count


def log_count(root: str | os.PathLike, rel: str, data: bytes) -> SavedCount:
    """The count of the log `rel` (its bytes: `data`) of the agent at `root`: the saved
    count of a prefix of `data` plus the lines after it, else the whole log counted;
    the result is saved for the next call when it grew or nothing was saved."""
    gitdir = find_git_dir(root)
    path = count_path(gitdir, root, rel) if gitdir is not None else None
    count = _load(path, rel, data) if path is not None else None
    if count is not None and count.size < len(data):
        try:
            tail = parse_tail(data, count.size, count.lines + 1, rel)
        except LogError:  # a bad or torn line after the counted ones: count as fold does
            count = None
        else:
            count.add(tail, len(data), count.lines + len(tail))
            count.fresh = True  # grew: save the longer count
    if count is None:
        count = _whole(data, rel)
    if count.fresh and count.size >= 0 and path is not None and gitdir is not None:
        _save(path, gitdir, rel, count, data)
    return count

