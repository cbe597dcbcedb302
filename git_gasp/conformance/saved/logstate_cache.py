"""The checks' saved log states: a `LogState` per verified log blob, under the git dir.

``<common git dir>/gasp/logstate-<key>-<blob>.state`` (the ``index_files`` format: the
keys and line offsets as raw words, then the records of ``logfindings``) holds the
state of the log's first `length` bytes, whose git blob id is `blob`. The key covers
the checker (formats, the rules' code, the op and kind tables), the agent root inside
the repository and the log's location in the manifest, so any change to them starts
afresh; what the packs decide (check 3) and each snapshot's verdict are in the records
and invalidated there. A state is used only once the log provably starts with its
blob's bytes — by check 4's facts (`TipFacts.starts_with`: the working file is, or
extends, HEAD's blob, which starts with the saved one), else by hashing the file's
first `length` bytes as a git blob — so a rewritten log is never trusted. A damaged
file counts as none (and says so); only the newest `KEEP` are kept (with the files
their chains need: a state saved after resuming one is a delta against it).
"""

from __future__ import annotations

import sys
import zlib
from collections.abc import Callable

from git_gasp.conformance.logfindings import RECORDS_FORMAT, load_records
from git_gasp.conformance.logsource import LogSource
from git_gasp.conformance.logstate import LogState
from git_gasp.conformance.saved.index_files import Entry, IndexFiles
from git_gasp.conformance.saved.lineindex import copy_offsets
from git_gasp.protocol.vocab import Vocabulary

FORMAT = 2
RULES_VERSION = 1  # bump when what a rule decides changes without its code changing
KEEP = 4
HASH_TRIES = 2  # saved states tried by hashing the log's prefix, longest first
_MAGIC = b"gasp-log-state"
# The code whose findings a saved state holds: any change to it starts afresh.
_RULE_MODULES = ("git_gasp.conformance.rules", "git_gasp.conformance.logstate",
                 "git_gasp.conformance.logfindings", "git_gasp.conformance.snapshot_check",
                 "git_gasp.conformance.logcheck", "git_gasp.conformance.saved.lineindex",
                 "git_gasp.protocol.envelope", "git_gasp.protocol.fold",
                 "git_gasp.protocol.ops", "git_gasp.protocol.vocab",
                 "git_gasp.protocol.jsonstrict", "git_gasp.protocol.snapshot")


def _code_digest() -> list[tuple[int, int, int]]:
    """(size, crc32, adler32) of each rule module's source: 64 bits of checksum and the
    size per module, so an edit that keeps the key is vanishingly unlikely (and no hash
    module is imported: the modules are loaded, and zlib is, on every check)."""
    out = []
    for name in _RULE_MODULES:
        module = sys.modules.get(name)
        if module is None:
            __import__(name)
            module = sys.modules[name]
        path = getattr(module, "__file__", None)
        try:
            with open(path, "rb") as f:  # type: ignore[arg-type]
                source = f.read()
        except (OSError, TypeError):
            source = name.encode()  # no source to read: the version alone decides
        out.append((len(source), zlib.crc32(source), zlib.adler32(source)))
    return out


def state_key(prefix: bytes, log_rel: str) -> str:
    """The key of the states of the log at `log_rel` in the agent root at `prefix`."""
    material = repr((FORMAT, RULES_VERSION, RECORDS_FORMAT, _code_digest(), prefix,
                     log_rel)).encode("utf-8", "surrogateescape")
    return f"{zlib.crc32(material):08x}{zlib.adler32(material):08x}"


class LogStateCache:
    """Load and save the `LogState`s of one log; never raises on a bad entry."""

    def __init__(self, common_dir: str, prefix: bytes, log_rel: str) -> None:
        self.files = IndexFiles(common_dir, magic=_MAGIC, prefix="logstate", suffix="state",
                                rules=state_key(prefix, log_rel), fmt=FORMAT, keep=KEEP,
                                extras=1)
        self.problem: str | None = None
        self.resumed: tuple[bytes, int] | None = None  # (blob, length) of the state used
        self.proof: str | None = None  # how its prefix was proven: "facts" or "hash"

    def resume(self, source: LogSource, vocab: Vocabulary,
               starts_with: Callable[[bytes], bool]) -> LogState | None:
        """The saved state of the longest prefix of `source` proven to be a saved blob:
        by `starts_with` (check 4's facts), else by hashing (at most HASH_TRIES)."""
        found = [(length, blob) for blob, length in self.files.ancestors()
                 if 0 < length <= source.size]
        found.sort(reverse=True)
        proven = [(length, blob) for length, blob in found if starts_with(blob)]
        tries = proven + [c for c in found if c not in proven][:HASH_TRIES]
        for length, blob in tries:
            if source.read(length - 1, length) != b"\n":
                continue
            if (length, blob) not in proven and source.blob_id(length) != blob:
                continue
            entry = self.files.load(blob, max_length=source.size)
            if entry is None or entry.length != length:
                continue
            try:
                state = restore(source, vocab, entry)
            except ValueError:
                self.files.problem = "corrupt"
                continue
            self.resumed = (blob, length)
            self.proof = "facts" if (length, blob) in proven else "hash"
            return state
        return None

    @property
    def note(self) -> str | None:
        """A note for the report when a saved state was damaged (and ignored)."""
        if self.files.problem is None:
            return None
        return f"the saved log state was {self.files.problem} and has been ignored"

    def save(self, blob: bytes, entry: Entry) -> None:
        """Store the state of blob `blob` (best effort)."""
        self.files.save(blob, entry)


def restore(source: LogSource, vocab: Vocabulary, entry: Entry) -> LogState:
    """The `LogState` an entry holds, over `source` (which starts with its bytes)."""
    state = LogState(source, vocab)
    if len(entry.offsets) != entry.line_count or not entry.extras:
        raise ValueError("sizes do not match")
    state.old_lines = state.line_count = entry.line_count
    state.length = entry.length
    state.keys = entry.keys
    state.offsets = entry.offsets
    load_records(state, entry.extras[0])
    return state


def entry_of(state: LogState) -> Entry:
    """The saved form of `state` as it is now (all its lines terminated), its records
    still to be added (`Entry.extras`)."""
    assert state.last_line is None
    return Entry(state.length, state.line_count, state.all_keys(), copy_offsets(state.offsets))
