"""Index files under the git dir: one per log blob id, raw 64-bit words and a checksum.

``<common git dir>/gasp/<prefix>-<rules>-<blob>.<suffix>`` holds a header line

    <magic> <format> <rules> <blob> <length> <lines> <size>… <crc32> <byte order>

then the sorted keys (``lineindex``: the first size is their count) and the offset of
each of the ``lines`` lines as raw words, then any further byte strings (one size
each). A blob id pins its content, so an entry never goes stale; the rules key changes
whenever what the entries record would change. Anything odd — unreadable, truncated,
wrong checksum, sizes or byte order — counts as no entry (`problem` says so when a
file of ours was damaged). Writes are atomic; only the newest `keep` files are kept.
This is the one home of the format: the guard's ``index_cache`` and the checks'
``logstate_cache`` are two users of it.
"""

from __future__ import annotations

import os
import re
import sys
import zlib
from array import array

from git_gasp.base.errors import GaspError
from git_gasp.base.files import AtomicFile
from git_gasp.base.record import Record

_ID = rb"[0-9a-f]{40}|[0-9a-f]{64}"


class Entry(Record):
    """One loaded index file."""

    FIELDS = ("length", "line_count", "keys", "offsets", "extras")

    def __init__(self, length: int, line_count: int, keys: array, offsets: array,
                 extras: list[bytes] | None = None) -> None:
        self.length, self.line_count = length, line_count  # bytes and lines of the log
        self.keys, self.offsets = keys, offsets
        self.extras = [] if extras is None else extras


class IndexFiles:
    """Entries named `<prefix>-<rules>-<blob>.<suffix>` in `<common_dir>/gasp/`, each with
    `extras` further byte strings after the keys and offsets."""

    def __init__(self, common_dir: str, *, magic: bytes, prefix: str, suffix: str,
                 rules: str, fmt: int, keep: int, extras: int = 0) -> None:
        self.dir = os.path.join(common_dir, "gasp")
        self.magic, self.prefix, self.suffix = magic, prefix, suffix
        self.rules, self.format, self.keep, self.extras = rules, fmt, keep, extras
        sizes = rb" (\d{1,15})" * (1 + extras)
        self._header = re.compile(re.escape(magic) + rb" (\d+) ([0-9a-f]+) (%s) (\d{1,15}) "
                                  rb"(\d{1,15})%s (\d+) (little|big)\n" % (_ID, sizes))
        self.saved: set[str] = set()
        self.problem: str | None = None  # set when a file of ours was damaged

    def path(self, blob_id: bytes) -> str:
        return os.path.join(self.dir, f"{self.prefix}-{self.rules}-{blob_id.decode()}"
                                      f".{self.suffix}")

    def _match(self, head: bytes, blob_id: bytes) -> re.Match | None:
        match = self._header.fullmatch(head)
        if match is None or int(match[1]) != self.format or match[2].decode() != self.rules \
                or match[3] != blob_id:
            return None
        return match

    def header(self, blob_id: bytes) -> int | None:
        """The covered length of `blob_id`'s entry (header only), or None."""
        try:
            with open(self.path(blob_id), "rb") as f:
                head = f.readline(512)
        except OSError:
            return None
        match = self._match(head, blob_id)
        return None if match is None else int(match[4])

    def load(self, blob_id: bytes, *, max_length: int | None = None) -> Entry | None:
        """The entry of blob `blob_id` (covering at most `max_length` bytes), or None."""
        path = self.path(blob_id)
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except FileNotFoundError:
            return None
        except OSError as exc:
            self.problem = f"unreadable ({exc.strerror})"
            return None
        entry = self._decode(raw, blob_id)
        if entry is None:
            self.problem = "corrupt"
            return None
        if max_length is not None and entry.length > max_length:
            return None
        self._touch(path)
        return entry

    def _decode(self, raw: bytes, blob_id: bytes) -> Entry | None:
        cut = raw.find(b"\n", 0, 512) + 1
        match = self._match(raw[:cut], blob_id) if cut else None
        if match is None:
            return None
        body = memoryview(raw)[cut:]  # no copy of the words
        length, lines = int(match[4]), int(match[5])
        sizes = [int(match[6 + i]) for i in range(1 + self.extras)]
        crc, order = int(match[7 + self.extras]), match[8 + self.extras].decode()
        n_keys = sizes[0]
        if order != sys.byteorder or len(body) != 8 * (n_keys + lines) + sum(sizes[1:]) \
                or zlib.crc32(body) != crc:
            return None
        keys, offsets = array("Q"), array("Q")
        if keys.itemsize != 8:  # pragma: no cover - 'Q' is 8 bytes on every platform we run
            return None
        keys.frombytes(body[:8 * n_keys])
        at = 8 * (n_keys + lines)
        offsets.frombytes(body[8 * n_keys:at])
        if lines and offsets[-1] > length:
            return None
        extras = []
        for size in sizes[1:]:
            extras.append(bytes(body[at:at + size]))
            at += size
        return Entry(length, lines, keys, offsets, extras)

    def save(self, blob_id: bytes, entry: Entry) -> bool:
        """Store `entry` for blob `blob_id` (best effort: a failure returns False)."""
        if len(entry.extras) != self.extras:
            raise ValueError(f"{self.prefix} entries hold {self.extras} extra strings")
        parts = [memoryview(entry.keys).cast("B"), memoryview(entry.offsets).cast("B"),
                 *entry.extras]
        crc = 0
        for part in parts:
            crc = zlib.crc32(part, crc)
        sizes = b" ".join(b"%d" % n for n in [len(entry.keys), *map(len, entry.extras)])
        head = b"%s %d %s %s %d %d %s %d %s\n" % (
            self.magic, self.format, self.rules.encode(), blob_id, entry.length,
            entry.line_count, sizes, crc, sys.byteorder.encode())
        path = self.path(blob_id)
        try:
            os.makedirs(self.dir, exist_ok=True)
            with AtomicFile(path, durable=False) as out:  # a lost entry is rebuilt
                for part in (head, *parts):
                    out.write(part)
        except (OSError, GaspError):  # GaspError: UnsafePath, a link where the entry goes
            return False
        self.saved.add(path)
        self.prune()
        return True

    def ancestors(self) -> list[tuple[bytes, int]]:
        """(blob id, covered length) of every entry under the current rules, newest first."""
        out = []
        ours = f"{self.prefix}-{self.rules}-"
        for path in self._entries():
            name = os.path.basename(path)
            if not name.startswith(ours):
                continue
            blob_id = name[len(ours):].split(".", 1)[0].encode()
            length = self.header(blob_id)
            if length is not None:
                out.append((blob_id, length))
            else:
                self.problem = "corrupt"  # a file of ours whose header does not read
        return out

    def _entries(self) -> list[str]:
        """Every entry file of this prefix (any rules), ours first, newest first."""
        ours = f"{self.prefix}-{self.rules}-"
        try:
            names = [n for n in os.listdir(self.dir) if n.startswith(self.prefix + "-")
                     and n.endswith("." + self.suffix)]
        except OSError:
            return []
        stamped = []
        for name in names:
            path = os.path.join(self.dir, name)
            try:
                stamped.append((os.stat(path).st_mtime_ns, name.startswith(ours), path))
            except OSError:
                continue
        stamped.sort(reverse=True)
        return [path for _, mine, path in stamped if mine] + \
            [path for _, mine, path in stamped if not mine]

    def prune(self) -> None:
        """Keep the newest `keep` entries (and every one saved by this run)."""
        for path in self._entries()[self.keep:]:
            if path not in self.saved:
                try:
                    os.unlink(path)
                except OSError:
                    pass

    @staticmethod
    def _touch(path: str) -> None:
        try:
            os.utime(path)
        except OSError:
            pass
