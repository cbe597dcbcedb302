"""Extensions the guard proved when it accepted a commit, kept for check 4.

When the pre-commit guard (or a runtime commit's) accepts a staged version of an
append-only file that extends its parent's version — proved by content, or by hashing
its first bytes into the parent's blob id — it records the pair of blob ids here, so
check 4 after the commit need not compare the two versions again. One small file,
``<common git dir>/gasp/proven-extensions``: a header line with the format and a crc32
of the body, then one ``<old blob> <old length> <new blob>`` line per pair, newest
last, at most `KEEP` of them. Best effort both ways: recording never raises, and a
missing, foreign, oversized or damaged file reads as no pairs.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterable

from git_gasp.base.digest import is_hex, is_object_id
from git_gasp.base.errors import GaspError
from git_gasp.base.files import atomic_write, open_file

FORMAT = 1
KEEP = 256  # pairs kept (a few per commit: the log, facts, journal)
NAME = "proven-extensions"
_MAGIC = b"gasp-proven-extensions"
_LIMIT = 64 + KEEP * (64 + 20 + 64 + 3)  # the largest file this module writes

Proof = tuple[bytes, int, bytes]  # (old blob id, its length, new blob id)


def path_of(common_dir: str) -> str:
    """Where the pairs of the repository whose common git dir is `common_dir` live."""
    return os.path.join(common_dir, "gasp", NAME)


def _proof(line: bytes) -> Proof | None:
    """The (old id, length, new id) a line records, or None when it is not one."""
    parts = line.split(b" ")
    if len(parts) != 3:
        return None
    old, length, new = parts
    if not (is_object_id(old) and len(old) == len(new) and is_object_id(new)
            and length.isdigit() and len(length) <= 19):
        return None
    return old, int(length), new


def _read(common_dir: str) -> list[Proof]:
    """The recorded pairs in order; [] for any problem with the file."""
    try:
        with open_file(path_of(common_dir)) as f:
            raw = f.read(_LIMIT + 1)
    except OSError:
        return []
    head, sep, body = raw.partition(b"\n")
    fields = head.split(b" ")
    if len(raw) > _LIMIT or not sep or len(fields) != 3 or fields[0] != _MAGIC \
            or not fields[1].isdigit() or int(fields[1]) != FORMAT \
            or not is_hex(fields[2], 8) or int(fields[2], 16) != zlib.crc32(body):
        return []
    if body and not body.endswith(b"\n"):
        return []
    out: list[Proof] = []
    for line in body.split(b"\n")[:-1]:
        found = _proof(line)
        if found is None:
            return []
        out.append(found)
    return out if len(out) <= KEEP else []


def load_extensions(common_dir: str) -> set[tuple[bytes, bytes]]:
    """The (old blob id, new blob id) pairs recorded (hex bytes): each new blob starts
    with the old one's bytes and obeys the one-parent rule. Empty on any problem."""
    return {(old, new) for old, _length, new in _read(common_dir)}


def record_extensions(common_dir: str, proofs: Iterable[Proof]) -> None:
    """Record several proved pairs at once (see `record_extension`); never raises."""
    try:
        new = [(old, int(length), blob) for old, length, blob in proofs
               if _proof(b"%s %d %s" % (old, length, blob)) is not None]
        if not new:
            return
        kept = [p for p in _read(common_dir) if p not in new]
        pairs = (kept + list(dict.fromkeys(new)))[-KEEP:]
        body = b"".join(b"%s %d %s\n" % p for p in pairs)
        head = b"gasp-proven-extensions %d %08x\n" % (FORMAT, zlib.crc32(body))
        os.makedirs(os.path.dirname(path_of(common_dir)), exist_ok=True)
        atomic_write(path_of(common_dir), head + body, durable=False)  # a lost pair is re-proved
    except (OSError, GaspError, TypeError, ValueError):
        return


def record_extension(common_dir: str, old_blob: bytes, old_len: int, new_blob: bytes) -> None:
    """Record that blob `new_blob` extends blob `old_blob` (of `old_len` bytes) by the
    one-parent rule, as the guard proved it (hex ids as bytes). Best effort: never
    raises; the write is atomic and the file keeps only the newest `KEEP` pairs."""
    record_extensions(common_dir, [(old_blob, old_len, new_blob)])
