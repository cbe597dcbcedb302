"""A version-2 git pack index (``pack-*.idx``), mapped and read raw: where an object's
entry is in its pack, found by the fan-out table and a binary search of the sorted ids
(no dulwich import, so a check that reads a few objects pays for a few lookups); the
whole id -> offset map is built only when many objects are looked up.

The format (git's Documentation/gitformat-pack): ``\\377tOc``, version 2, 256 fan-out
counts, N sorted 20-byte ids, N CRC32s, N 4-byte offsets (high bit set: an index into
the table of 8-byte offsets that follows), then the pack's and the index's checksums.
"""

from __future__ import annotations

import binascii
import mmap
import struct
import sys
from array import array

_MAGIC = b"\377tOc"
_HEADER = 8
_FANOUT = 256 * 4
_MAP_AFTER = 256  # lookups before the whole id map is built
_MAP_MAX_OBJECTS = 1 << 18  # an index this big is never read whole into a dict


class PackIndexError(Exception):
    """The file is not a version-2 sha1 pack index, or is cut short."""


class PackIndex:
    """One mapped ``.idx`` file: ``object_offset(hex id)`` -> offset in the pack."""

    def __init__(self, path: str) -> None:
        with open(path, "rb") as f:
            try:
                buf = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            except ValueError as exc:  # an empty file cannot be mapped
                raise PackIndexError(f"{path}: empty pack index") from exc
        try:
            if len(buf) < _HEADER + _FANOUT or buf[:4] != _MAGIC or buf[4:8] != b"\0\0\0\2":
                raise PackIndexError(f"{path}: not a version-2 pack index")
            self._fanout = struct.unpack_from(">256I", buf, _HEADER)
            n = self._fanout[255]
            self._names = _HEADER + _FANOUT
            self._offsets = self._names + 24 * n  # after the ids and the CRC32s
            self._large = self._offsets + 4 * n
            if len(buf) < self._large + 40 or any(
                    a > b for a, b in zip(self._fanout, self._fanout[1:], strict=False)):
                raise PackIndexError(f"{path}: pack index is cut short or corrupt")
        except BaseException:
            buf.close()
            raise
        self._buf = buf
        self._n = n
        self._lookups = 0
        self._ids: dict[bytes, int] | None = None

    def __len__(self) -> int:
        return self._n

    def pack_checksum(self) -> bytes:
        """The checksum of the pack this index is for (a pack's last 20 bytes)."""
        return bytes(self._buf[-40:-20])

    def close(self) -> None:
        self._ids = None
        self._buf.close()

    def object_offset(self, hexsha: bytes) -> int:
        """The pack offset of object `hexsha` (40 hex digits); KeyError if not here."""
        ids = self._ids
        if ids is not None:
            return ids[hexsha]
        self._lookups += 1
        if self._lookups > _MAP_AFTER and self._n <= _MAP_MAX_OBJECTS:
            self._ids = ids = self._id_map()
            return ids[hexsha]
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
                return self._offset(mid)
        raise KeyError(hexsha)

    def _offset(self, i: int) -> int:
        (value,) = struct.unpack_from(">I", self._buf, self._offsets + 4 * i)
        if not value & 0x80000000:
            return value
        (large,) = struct.unpack_from(">Q", self._buf, self._large + 8 * (value & 0x7FFFFFFF))
        return large

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
                    ids[names[40 * i:40 * i + 40]] = self._offset(i)
        return ids
