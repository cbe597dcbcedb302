"""The checks git makes of a pack index (``pack-*.idx``) when it opens one, which
dulwich's ``load_pack_index`` does not make: dulwich reads the index (`odb.packs`),
this says whether git would refuse it first.

The format (git's Documentation/gitformat-pack): ``\\377tOc``, version 2, 256 fan-out
counts, N sorted 20-byte ids, N CRC32s, N 4-byte offsets (high bit set: an index into
the table of 8-byte offsets that follows), then the pack's and the index's checksums.

An index is validated as git's ``load_idx`` (packfile.c) validates it when it opens one,
and one git refuses is a `PackIndexRefused` naming the file: too small, an unsupported
version, a fan-out table that is not monotonic, a size that does not fit the object
count its last fan-out entry gives. The pack's own header and checksum, and each offset
read (inside the pack, as git's ``use_pack`` wants), are compared in `odb.packs`. The
index's trailing SHA-1 over itself is what ``git verify-pack`` checks (dulwich's
``PackIndex.check``), not what git checks when it reads, and is not checked: 21 ms a
check on a 1,000,000-object index, where the rest of validation costs microseconds.
"""

from __future__ import annotations

import mmap
import os
import stat
import struct

from git_gasp.base.files import map_regular_file

_MAGIC = b"\377tOc"
_HEADER = 8
_FANOUT = 256 * 4


class PackIndexError(ValueError):
    """The file is not a version-2 sha1 pack index (a version-1 index git reads is one:
    dulwich reads it), or is one git refuses (`PackIndexRefused`)."""


class PackIndexRefused(PackIndexError):
    """A pack index git refuses to use: `path`, and `why` (git's reason)."""

    def __init__(self, path: str, why: str) -> None:
        self.path, self.why = path, why
        super().__init__(f"{path}: {why}")


def validate(buf: bytes | mmap.mmap, path: str) -> int:
    """The object count of the index `buf` (at `path`) as git's ``load_idx`` reads it;
    PackIndexRefused where git refuses the file, PackIndexError for a valid version-1
    index (read elsewhere)."""
    size = len(buf)
    if size < _FANOUT + 40:
        raise PackIndexRefused(path, f"index file is too small ({size} bytes)")
    version = 2 if buf[:4] == _MAGIC else 1
    if version == 2:
        (version,) = struct.unpack_from(">I", buf, 4)
        if version != 2:
            raise PackIndexRefused(path, f"index file is version {version}, which git "
                                   "does not read")
    fanout = struct.unpack_from(">256I", buf, _HEADER if version == 2 else 0)
    if any(a > b for a, b in zip(fanout, fanout[1:], strict=False)):
        raise PackIndexRefused(path, "non-monotonic index (its fan-out table "
                               "decreases)")
    n = fanout[255]
    if version == 1:
        if size != _FANOUT + 24 * n + 40:
            raise PackIndexRefused(path, f"wrong index v1 file size for {n} objects")
        raise PackIndexError(f"{path}: a version-1 pack index")
    least = _HEADER + _FANOUT + 28 * n + 40
    most = least + 8 * (n - 1) if n else least
    if not least <= size <= most:
        raise PackIndexRefused(path, f"wrong index v2 file size ({size} bytes for "
                               f"{n} objects: {least} to {most})")
    return n



def refusal(path: str) -> str | None:
    """Why git refuses the index at `path` (not a regular file, or `validate`), None
    when git reads it; OSError when it cannot be read at all (missing, raced away)."""
    if not stat.S_ISREG(os.lstat(path).st_mode):
        return ("a symbolic link or not a regular file: no pack index is read through a "
                "link (`git repack -a -d` writes a real one)")
    buf = map_regular_file(path)
    if buf is None:  # an empty file cannot be mapped
        return "index file is too small (0 bytes)"
    try:
        validate(buf, path)
    except PackIndexRefused as exc:
        return exc.why
    except PackIndexError:
        return None  # a version-1 index, which git reads
    finally:
        buf.close()
    return None


def mismatch(base: str) -> str | None:
    """Why git's ``open_packed_git_1`` refuses the pack ``base.pack`` with the index
    ``base.idx`` (which `refusal` accepted): its object count or its checksum is not
    the index's; None when it is the index's pack. OSError when the pack cannot be
    mapped or does not start as one (``PACK``): it is skipped, its objects read raw."""
    pack = map_regular_file(base + ".pack")
    if pack is None or pack[:4] != b"PACK":
        if pack is not None:
            pack.close()
        raise OSError(f"{base}.pack is not a pack")
    idx = map_regular_file(base + ".idx")
    try:
        if idx is None:
            raise OSError(f"{base}.idx is empty")
        fanout_end = (_HEADER if idx[:4] == _MAGIC else 0) + _FANOUT
        (indexed,) = struct.unpack_from(">I", idx, fanout_end - 4)
        if len(pack) < 32:
            return "not a pack (cut short before its header and checksum)"
        version, count = struct.unpack_from(">II", pack, 4)
        if version not in (2, 3):
            return f"not a pack (version {version})"
        if count != indexed:
            return f"packfile claims to have {count} objects while index indicates {indexed}"
        if pack[-20:] != idx[-40:-20]:
            return "packfile does not match index (cut short or replaced)"
        return None
    finally:
        pack.close()
        if idx is not None:
            idx.close()
