"""The guard's cache: the `CommittedLog` index of a log blob, kept under the git dir.

One file per blob id (``<common git dir>/gasp/guard-<rules>-<blob>.facts``): a header
line, then the sorted keys and the line offsets as raw 64-bit words. A blob id pins
its content, so an entry never goes stale; the rules key changes whenever what the
index records would change (format, ops kind, entity-creating kinds). Anything odd —
unreadable, truncated, wrong checksum, wrong sizes, another byte order — counts as
no entry, and the guard indexes the log itself. Only the newest few files are kept.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import zlib
from array import array

from git_gasp.base.errors import GaspError
from git_gasp.base.files import atomic_write
from git_gasp.conformance.committed_log import CommittedLog
from git_gasp.protocol.envelope import OPS_KIND
from git_gasp.protocol.vocab import ENTITY_CREATING

FORMAT = 1
KEEP = 4  # files kept (each guarded log needs two: HEAD's blob and the staged one)
_MAGIC = b"gasp-guard-facts"
_HEADER = re.compile(rb"gasp-guard-facts (\d+) ([0-9a-f]+) ([0-9a-f]{40}|[0-9a-f]{64}) "
                     rb"(\d+) (\d+) (\d+) (\d+) (little|big)\n")


def rules_key() -> str:
    material = repr((FORMAT, OPS_KIND, sorted(ENTITY_CREATING.items())))
    return hashlib.sha256(material.encode()).hexdigest()[:12]


class CommittedLogCache:
    """Load and save `CommittedLog` indexes of log blobs; never raises on a bad entry."""

    def __init__(self, common_dir: str) -> None:
        self.dir = os.path.join(common_dir, "gasp")
        self.rules = rules_key()
        self.saved: set[str] = set()

    def path(self, blob_id: bytes) -> str:
        return os.path.join(self.dir, f"guard-{self.rules}-{blob_id.decode()}.facts")

    def _read(self, path: str) -> tuple[re.Match, bytes] | None:
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except OSError:
            return None
        head, sep, body = raw.partition(b"\n")
        match = _HEADER.fullmatch(head + sep)
        if match is None or int(match[1]) != FORMAT or match[2].decode() != self.rules:
            return None
        return match, body

    def header(self, blob_id: bytes) -> int | None:
        """The indexed length of `blob_id`'s entry (header only), or None."""
        try:
            with open(self.path(blob_id), "rb") as f:
                head = f.readline(256)
        except OSError:
            return None
        match = _HEADER.fullmatch(head)
        if match is None or match[3] != blob_id or match[2].decode() != self.rules:
            return None
        return int(match[4])

    def load(self, blob_id: bytes, data: bytes) -> CommittedLog | None:
        """The index of blob `blob_id`, reading lines from `data` (which must start with
        that blob's bytes: the caller proves it), or None."""
        found = self._read(self.path(blob_id))
        if found is None:
            return None
        match, body = found
        length, lines, n_keys, crc = (int(match[i]) for i in range(4, 8))
        if match[3] != blob_id or match[8].decode() != sys.byteorder or length > len(data) \
                or len(body) != 8 * (n_keys + lines) or zlib.crc32(body) != crc:
            return None
        keys, offsets = array("Q"), array("Q")
        if keys.itemsize != 8:  # pragma: no cover - 'Q' is 8 bytes on every platform we run
            return None
        keys.frombytes(body[:8 * n_keys])
        offsets.frombytes(body[8 * n_keys:])
        if lines and offsets[-1] > length:
            return None
        self._touch(self.path(blob_id))
        return CommittedLog(data, length, lines, keys, offsets)

    def save(self, blob_id: bytes, log: CommittedLog) -> None:
        """Store the index of blob `blob_id` (best effort: a failure is not an error)."""
        path = self.path(blob_id)
        body = log.keys.tobytes() + log.offsets.tobytes()
        head = b"%s %d %s %s %d %d %d %d %s\n" % (
            _MAGIC, FORMAT, self.rules.encode(), blob_id, log.length, log.line_count,
            len(log.keys), zlib.crc32(body), sys.byteorder.encode())
        try:
            os.makedirs(self.dir, exist_ok=True)
            atomic_write(path, head + body, durable=False)  # a lost entry is rebuilt
        except (OSError, GaspError):  # GaspError: UnsafePath, a link where the entry goes
            return
        self.saved.add(path)
        self.prune()

    def ancestors(self) -> list[tuple[bytes, int]]:
        """(blob id, indexed length) of every entry, newest first."""
        out = []
        for path in self._entries():
            blob_id = os.path.basename(path).rsplit("-", 1)[1].split(".", 1)[0].encode()
            length = self.header(blob_id)
            if length is not None:
                out.append((blob_id, length))
        return out

    def _entries(self) -> list[str]:
        prefix = f"guard-{self.rules}-"
        try:
            names = [n for n in os.listdir(self.dir) if n.startswith("guard-")
                     and n.endswith(".facts")]
        except OSError:
            return []
        stamped = []
        for name in names:
            path = os.path.join(self.dir, name)
            try:
                stamped.append((os.stat(path).st_mtime_ns, name.startswith(prefix), path))
            except OSError:
                continue
        stamped.sort(reverse=True)
        return [path for _, ours, path in stamped if ours] + \
            [path for _, ours, path in stamped if not ours]

    def prune(self) -> None:
        """Keep the newest KEEP entries (and every one saved by this run)."""
        for path in self._entries()[KEEP:]:
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
