"""The guard's cache: the `CommittedLog` index of a log blob, kept under the git dir.

One file per blob id (``<common git dir>/gasp/guard-<rules>-<blob>.facts``, in the
format of ``conformance.saved.index_files``): a header line, then the sorted keys and
the line offsets as raw 64-bit words; the staged blob's entry is a delta against
HEAD's when it grew from it. A blob id pins its content, so an entry never goes stale; the rules
key changes whenever what the index records would change (format, ops kind,
entity-creating kinds). Anything odd — unreadable, truncated, wrong checksum, wrong
sizes, another byte order — counts as no entry, and the guard indexes the log itself.
Only the newest few files are kept.
"""

from __future__ import annotations

import zlib

from git_gasp.conformance.saved.index_files import Entry, IndexFiles
from git_gasp.guard.committed_log import CommittedLog
from git_gasp.protocol.envelope import OPS_KIND
from git_gasp.protocol.vocab import ENTITY_CREATING

FORMAT = 2
KEEP = 4  # files kept (each guarded log needs two: HEAD's blob and the staged one)
_MAGIC = b"gasp-guard-facts"


def rules_key() -> str:
    material = repr((FORMAT, OPS_KIND, sorted(ENTITY_CREATING.items()))).encode()
    return f"{zlib.crc32(material):08x}{zlib.adler32(material) & 0xFFFF:04x}"


class CommittedLogCache:
    """Load and save `CommittedLog` indexes of log blobs; never raises on a bad entry."""

    def __init__(self, common_dir: str) -> None:
        self.files = IndexFiles(common_dir, magic=_MAGIC, prefix="guard", suffix="facts",
                                rules=rules_key(), fmt=FORMAT, keep=KEEP)

    def header(self, blob_id: bytes) -> int | None:
        """The indexed length of `blob_id`'s entry (header only), or None."""
        return self.files.header(blob_id)

    def ancestors(self) -> list[tuple[bytes, int]]:
        """(blob id, indexed length) of every entry, newest first."""
        return self.files.ancestors()

    def load(self, blob_id: bytes, data: bytes) -> CommittedLog | None:
        """The index of blob `blob_id`, reading lines from `data` (which must start with
        that blob's bytes: the caller proves it), or None."""
        entry = self.files.load(blob_id, max_length=len(data))
        if entry is None:
            return None
        return CommittedLog(data, entry.length, entry.line_count, entry.keys, entry.offsets)

    def save(self, blob_id: bytes, log: CommittedLog) -> None:
        """Store the index of blob `blob_id` (best effort: a failure is not an error)."""
        self.files.save(blob_id, Entry(log.length, log.line_count, log.keys, log.offsets))
