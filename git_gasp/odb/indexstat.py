"""Whether a work-tree file holds its staged blob, by the index's stat data, as git
decides it, without hashing the file.

The rules are git's (Documentation/technical/racy-git.txt; read-cache.c): git records
each entry's stat data (ctime, mtime, dev, inode, uid, gid, size) when it hashes the
file, and ``ce_match_stat`` calls the file unchanged while they still match lstat's;
an entry whose mtime is not older than the index file's own is "racily clean"
(``is_racy_timestamp``: the file may have changed in the same instant the index was
written), and git then compares the contents instead — here it counts as unproved.
Every field is compared, even those git's defaults skip (dev, uid, gid): a stricter
test only costs a hash. Only the entry for one path is read: found by its name and
checked field by field (flags, stage 0, the blob id), in index versions 2 and 3.
Anything else — a v4 or split index, a name not found, an entry with skip-worktree or
intent-to-add, a field that differs — proves nothing, and the caller hashes the file.
"""

from __future__ import annotations

import mmap
import os
import stat
import struct

from git_gasp.base.files import open_file

_FIELDS = struct.Struct(">10I")  # ctime s, ns, mtime s, ns, dev, ino, mode, uid, gid, size
_MASK = 0xFFFFFFFF


Entry = tuple[tuple[int, ...], int]  # the entry's ten stat words, the index's mtime (ns)


def index_entry_stat(index_path: str, path: bytes, blob_id: bytes) -> Entry | None:
    """The stat words of `path`'s stage-0 entry holding blob `blob_id` (hex) in the index
    at `index_path`, and that index file's mtime; None when not found so."""
    try:
        oid = bytes.fromhex(blob_id.decode("ascii"))
        with open_file(index_path) as f:
            mtime = os.fstat(f.fileno()).st_mtime_ns
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return _find(data, path, oid, mtime)
    except (OSError, ValueError, UnicodeError):
        return None


def _find(data: mmap.mmap, path: bytes, oid: bytes, mtime: int) -> Entry | None:
    """The entry of `path` holding `oid` in the index bytes `data` (see the docstring)."""
    if len(data) < 12 or data[:4] != b"DIRC":
        return None
    version = int.from_bytes(data[4:8], "big")
    if version not in (2, 3) or not path or b"\x00" in path:
        return None
    n, needle = len(oid), path + b"\x00"
    at = data.find(needle, 12)
    while at >= 0:
        for extended in (False, True) if version == 3 else (False,):
            flags_at = at - (4 if extended else 2)
            start = flags_at - n - 40
            if start < 12:
                continue
            flags = int.from_bytes(data[flags_at:flags_at + 2], "big")
            if bool(flags & 0x4000) != extended or flags & 0x3000 \
                    or (flags & 0xFFF) != min(len(path), 0xFFF):
                continue
            if extended and int.from_bytes(data[at - 2:at], "big") & 0x6000:
                continue  # skip-worktree or intent-to-add: the file is not what git tracks
            if data[flags_at - n:flags_at] != oid:
                continue
            return _FIELDS.unpack_from(data, start), mtime
        at = data.find(needle, at + 1)
    return None


def stat_proves(found: Entry, st: os.stat_result) -> bool:
    """True if the file with stat `st` still holds what the index entry recorded."""
    entry, index_mtime_ns = found
    ctime_s, ctime_ns, mtime_s, mtime_ns, dev, ino, mode, uid, gid, size = entry
    if not stat.S_ISREG(st.st_mode) or not stat.S_ISREG(mode):
        return False
    if _split(st.st_ctime_ns) != (ctime_s, ctime_ns) or \
            _split(st.st_mtime_ns) != (mtime_s, mtime_ns):
        return False
    if (st.st_dev & _MASK, st.st_ino & _MASK, st.st_uid & _MASK, st.st_gid & _MASK,
            st.st_size & _MASK) != (dev, ino, uid, gid, size):
        return False
    # racily clean: recorded in the same instant as (or after) the index was written
    return st.st_mtime_ns < index_mtime_ns and st.st_size == size


def _split(ns: int) -> tuple[int, int]:
    return (ns // 1_000_000_000) & _MASK, ns % 1_000_000_000
