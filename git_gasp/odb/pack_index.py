"""A version-2 git pack index (``pack-*.idx``), mapped and read raw: where an object's
entry is in its pack, found by the fan-out table and a binary search of the sorted ids
(no dulwich import, so a check that reads a few objects pays for a few lookups); the
whole id -> offset map is built only when many objects are looked up.

The format (git's Documentation/gitformat-pack): ``\\377tOc``, version 2, 256 fan-out
counts, N sorted 20-byte ids, N CRC32s, N 4-byte offsets (high bit set: an index into
the table of 8-byte offsets that follows), then the pack's and the index's checksums.

An index is validated as git's ``load_idx`` (packfile.c) validates it when it opens one,
and one git refuses is a `PackIndexRefused` naming the file: too small, an unsupported
version, a fan-out table that is not monotonic, a size that does not fit the object
count its last fan-out entry gives. As git does when it reads an entry
(``nth_packed_object_offset``, ``use_pack``), an offset into the 8-byte table must lie
inside that table, and an offset must lie inside the pack (`pack_size`). The pack's own
header and checksum are compared in `odb.packs`. The index's trailing SHA-1 over itself
is what ``git verify-pack`` checks, not what git checks when it reads, and is not
checked: 21 ms a check on a 1,000,000-object index (``bench/bench_pack_index.py
--validate``), where the rest of validation costs microseconds.
"""

from __future__ import annotations

import binascii
import mmap
import struct
import sys
from array import array

from git_gasp.base.files import map_regular_file

_MAGIC = b"\377tOc"
_HEADER = 8
_FANOUT = 256 * 4
_MAP_AFTER = 256  # lookups before the whole id map is built
_MAP_MAX_OBJECTS = 1 << 18  # an index this big is never read whole into a dict


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


class PackIndex:
    """One mapped ``.idx`` file: ``object_offset(hex id)`` -> offset in the pack."""

    def __init__(self, path: str) -> None:
        buf = map_regular_file(path)
        if buf is None:  # an empty file cannot be mapped
            raise PackIndexRefused(path, "index file is too small (0 bytes)")
        try:
            n = validate(buf, path)
            self._fanout = struct.unpack_from(">256I", buf, _HEADER)
            self._names = _HEADER + _FANOUT
            self._offsets = self._names + 24 * n  # after the ids and the CRC32s
            self._large = self._offsets + 4 * n
        except BaseException:
            buf.close()
            raise
        self.path = path
        self._end = 1 << 64  # offsets below it are inside the pack (`pack_size`)
        self._large_end = len(buf) - 40
        self._buf = buf
        self._n = n
        self._lookups = 0
        self._ids: dict[bytes, int] | None = None

    @property
    def pack_size(self) -> int | None:
        """The size of the pack, once the reader that maps it has set it: an offset
        must lie between its header and its checksum."""
        return None if self._end == 1 << 64 else self._end + 20

    @pack_size.setter
    def pack_size(self, size: int) -> None:
        self._end = size - 20

    def __len__(self) -> int:
        return self._n

    def pack_checksum(self) -> bytes:
        """The checksum of the pack this index is for (a pack's last 20 bytes)."""
        return bytes(self._buf[-40:-20])

    def close(self) -> None:
        self._ids = None
        self._buf.close()

    def object_offset(self, hexsha: bytes) -> int:
        """The pack offset of object `hexsha` (40 hex digits); KeyError if not here;
        PackIndexRefused when the index puts it outside the pack (git's use_pack)."""
        ids = self._ids
        if ids is None:
            self._lookups += 1
            if self._lookups > _MAP_AFTER and self._n <= _MAP_MAX_OBJECTS:
                self._ids = ids = self._id_map()
        if ids is not None:
            offset = ids[hexsha]
            if 12 <= offset < self._end:
                return offset
            raise self._outside(offset)
        try:
            sha = binascii.unhexlify(hexsha)
        except (binascii.Error, ValueError):
            raise KeyError(hexsha) from None
        if len(sha) != 20:
            raise KeyError(hexsha)
        first = sha[0]
        lo = self._fanout[first - 1] if first else 0
        hi = self._fanout[first]
        buf, names = self._buf, self._names
        while lo < hi:
            mid = (lo + hi) // 2
            at = names + 20 * mid
            here = buf[at:at + 20]
            if here < sha:
                lo = mid + 1
            elif here > sha:
                hi = mid
            else:
                offset = self._offset(mid)
                if 12 <= offset < self._end:
                    return offset
                raise self._outside(offset)
        raise KeyError(hexsha)

    def _offset(self, i: int) -> int:
        (value,) = struct.unpack_from(">I", self._buf, self._offsets + 4 * i)
        return self._large_offset(i, value) if value & 0x80000000 else value

    def _large_offset(self, i: int, value: int) -> int:
        """Entry `i`'s offset from the 8-byte table, whose index `value` gives (git:
        "offset beyond end of pack index" when it points past the table)."""
        at = self._large + 8 * (value & 0x7FFFFFFF)
        if at + 8 > self._large_end:
            raise PackIndexRefused(self.path, f"offset of entry {i} beyond end of pack index")
        (large,) = struct.unpack_from(">Q", self._buf, at)
        return large

    def _outside(self, offset: int) -> PackIndexRefused:
        return PackIndexRefused(self.path, f"offset {offset} beyond end of packfile "
                                f"({self.pack_size} bytes)")

    def _id_map(self) -> dict[bytes, int]:
        """Hex id -> offset of every object, read in one go."""
        n, buf = self._n, self._buf
        names = binascii.hexlify(buf[self._names:self._names + 20 * n])
        offsets = array("I")
        offsets.frombytes(buf[self._offsets:self._offsets + 4 * n])
        if sys.byteorder == "little":
            offsets.byteswap()  # the index is big-endian
        ids = dict(zip([names[i:i + 40] for i in range(0, 40 * n, 40)], offsets, strict=True))
        if n and max(offsets) >> 31:  # offsets past 2 GiB live in the large table
            for i, value in enumerate(offsets):
                if value >> 31:
                    ids[names[40 * i:40 * i + 40]] = self._large_offset(i, value)
        return ids
