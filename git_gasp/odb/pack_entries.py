"""Raw git pack entries for the pack prover: entry headers, a bounded inflate, and
delta instructions parsed (never applied).

A pack entry starts with a header holding its type and the size of what its zlib
stream inflates to: the whole object for a full entry, the delta data for a delta
(an OFS_DELTA names its base by a backward offset in the same pack, a REF_DELTA by
object id). Delta data starts with the base's and the target's sizes (varints), then
instructions: a copy of a range of the base, or an insert of literal bytes.
"""

from __future__ import annotations

import bisect
import zlib
from array import array
from collections import namedtuple
from collections.abc import Iterator

from git_gasp.protocol.appendonly import common_prefix_len

BLOB, OFS_DELTA, REF_DELTA = 3, 6, 7
_FULL_TYPES = frozenset({1, 2, 3, 4})
_CHUNK = 1 << 20
_SMALL = 1 << 16


class PackFormatError(Exception):
    """A pack entry or delta that does not parse as git writes them."""


class EntryHeader(namedtuple("EntryHeader", "type_num size data base")):
    """A pack entry's header: `type_num` 1..4 (commit, tree, blob, tag) or OFS_DELTA /
    REF_DELTA; `size`, the bytes its zlib stream inflates to; `data`, the offset of that
    stream; `base`, for OFS_DELTA the base's offset, for REF_DELTA its raw id, else None."""

    __slots__ = ()


def entry_header(buf: bytes | memoryview, offset: int, oid_length: int = 20) -> EntryHeader:
    """Parse the header of the pack entry at `offset` of `buf` (a mapped pack)."""
    try:
        c = buf[offset]
        pos = offset + 1
        type_num, size, shift = (c >> 4) & 7, c & 15, 4
        while c & 0x80:
            c = buf[pos]
            pos += 1
            size |= (c & 0x7F) << shift
            shift += 7
        base: int | bytes | None = None
        if type_num == OFS_DELTA:
            c = buf[pos]
            pos += 1
            back = c & 0x7F
            while c & 0x80:
                c = buf[pos]
                pos += 1
                back = ((back + 1) << 7) | (c & 0x7F)
            if not 0 < back <= offset:
                raise PackFormatError(f"bad delta base offset at {offset}")
            base = offset - back
        elif type_num == REF_DELTA:
            base = bytes(buf[pos:pos + oid_length])
            if len(base) != oid_length:
                raise PackFormatError(f"truncated entry at {offset}")
            pos += oid_length
        elif type_num not in _FULL_TYPES:
            raise PackFormatError(f"bad entry type {type_num} at {offset}")
    except IndexError:
        raise PackFormatError(f"truncated entry at {offset}") from None
    return EntryHeader(type_num, size, pos, base)


def inflate_chunks(buf: bytes | memoryview, start: int, size: int) -> Iterator[bytes]:
    """The zlib stream at `start` of `buf`, in pieces of at most 1 MiB; it must inflate
    to exactly `size` bytes (else PackFormatError once the pieces run out)."""
    z = zlib.decompressobj()
    got, pos = 0, start
    try:
        while not z.eof and pos < len(buf):
            piece = buf[pos:pos + min(_CHUNK, max(64, size - got + 64))]
            chunk = z.decompress(piece, min(_CHUNK, size - got + 1))
            pos += len(piece) - len(z.unconsumed_tail)
            got += len(chunk)
            if got > size:
                break
            if chunk:
                yield chunk
    except zlib.error as exc:
        raise PackFormatError(f"bad zlib stream at {start}: {exc}") from None
    if got != size or not z.eof:
        raise PackFormatError(f"zlib stream at {start} does not inflate to {size} bytes")


def inflate(buf: bytes | memoryview, start: int, size: int) -> bytes:
    """The zlib stream at `start` of `buf`, which must inflate to exactly `size` bytes."""
    if size <= _SMALL:  # one call: a small stream's deflated bytes fit in this window
        z = zlib.decompressobj()
        try:
            data = z.decompress(buf[start:start + size + (size >> 8) + 64], size + 1)
        except zlib.error as exc:
            raise PackFormatError(f"bad zlib stream at {start}: {exc}") from None
        if z.eof and len(data) == size:
            return data
        if len(data) > size:
            raise PackFormatError(f"zlib stream at {start} does not inflate to {size} bytes")
    return b"".join(inflate_chunks(buf, start, size))


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data):
            raise PackFormatError("truncated delta header")
        c = data[pos]
        pos += 1
        value |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return value, pos


def delta_sizes(data: bytes) -> tuple[int, int]:
    """The (base size, target size) a delta starts with."""
    base_size, pos = _varint(data, 0)
    return base_size, _varint(data, pos)[0]


_RUN = bytearray()  # the copies of bytes [k * 64 KiB, (k + 1) * 64 KiB), k = 0, 1, ...
_RUN_AT = array("Q", [0])  # where the k-th copy starts in _RUN
_RUN_BYTES = [b""]  # _RUN as bytes, as long as it is


def _copy_run(count: int) -> tuple[bytes, array]:
    """The first `count` copies of 64 KiB from offset 0 as git encodes them (a length
    of 0x10000 takes no size bytes), one after another, and where each one starts."""
    while len(_RUN_AT) <= count:
        off = (len(_RUN_AT) - 1) << 16
        op, args = 0x80, bytearray()
        for bit, shift in ((1, 0), (2, 8), (4, 16), (8, 24)):
            if (off >> shift) & 0xFF:
                op |= bit
                args.append((off >> shift) & 0xFF)
        _RUN.append(op)
        _RUN.extend(args)
        _RUN_AT.append(len(_RUN))
    if len(_RUN_BYTES[0]) != len(_RUN):
        _RUN_BYTES[0] = bytes(_RUN)
    return _RUN_BYTES[0], _RUN_AT


class Delta(namedtuple("Delta", "base_size target_size prefix starts ops data")):
    """A parsed delta: the target's first `prefix` bytes equal the base's (copies from
    base offset == target position, from 0); past that, one instruction per entry of
    `starts` (target offset) and `ops` (base offset of a copy or -1 for an insert,
    length, offset of an insert's bytes in `data`)."""

    __slots__ = ()

    def source(self, pos: int) -> tuple[int, int]:
        """Where target byte `pos` (>= prefix) comes from: (base offset, -1) for a copy,
        (-1, the byte) for an insert."""
        i = bisect.bisect_right(self.starts, pos) - 1
        start = self.starts[i]
        off, _length, at = self.ops[i]
        if off < 0:
            return -1, self.data[at + pos - start]
        return off + pos - start, -1


def parse_delta(data: bytes) -> Delta:
    """Parse and check a delta's instructions (sizes and copy ranges); apply nothing."""
    base_size, pos = _varint(data, 0)
    target_size, pos = _varint(data, pos)
    end = len(data)
    tpos = 0
    prefix = -1  # -1 while the copies are still contiguous from 0
    starts: list[int] = []
    ops: list[tuple[int, int, int]] = []
    whole = min(base_size, target_size) >> 16
    if whole and pos < end and data[pos] == 0x80:  # git's 64 KiB copies of the prefix
        run, at = _copy_run(whole)  # (the run may be longer: the slice bounds the match)
        matched = common_prefix_len(data[pos:pos + at[whole]], run)
        done = bisect.bisect_right(at, matched, 0, whole + 1) - 1
        pos += at[done]
        tpos = done << 16
    try:
        while pos < end:
            op = data[pos]
            pos += 1
            if op & 0x80:
                off = length = 0
                if op & 0x01:
                    off = data[pos]
                    pos += 1
                if op & 0x02:
                    off |= data[pos] << 8
                    pos += 1
                if op & 0x04:
                    off |= data[pos] << 16
                    pos += 1
                if op & 0x08:
                    off |= data[pos] << 24
                    pos += 1
                if op & 0x10:
                    length = data[pos]
                    pos += 1
                if op & 0x20:
                    length |= data[pos] << 8
                    pos += 1
                if op & 0x40:
                    length |= data[pos] << 16
                    pos += 1
                if length == 0:
                    length = 0x10000
                if off + length > base_size:
                    raise PackFormatError("delta copies past the end of its base")
                if prefix < 0 and off == tpos:
                    tpos += length
                    continue
                if prefix < 0:
                    prefix = tpos
                starts.append(tpos)
                ops.append((off, length, 0))
                tpos += length
            elif op:
                if pos + op > end:
                    raise PackFormatError("truncated delta insert")
                if prefix < 0:
                    prefix = tpos
                starts.append(tpos)
                ops.append((-1, op, pos))
                pos += op
                tpos += op
            else:
                raise PackFormatError("delta opcode 0")
            if tpos > target_size:
                break
    except IndexError:
        raise PackFormatError("truncated delta copy") from None
    if tpos != target_size:
        raise PackFormatError("delta does not build its declared size")
    return Delta(base_size, target_size, tpos if prefix < 0 else prefix, starts, ops,
                 data if any(o[0] < 0 for o in ops) else b"")


def apply_parsed(base: bytes, delta: Delta) -> bytes:
    """The object a parsed `delta` builds from `base` (PackFormatError: wrong base)."""
    if len(base) != delta.base_size:
        raise PackFormatError("delta base has the wrong size")
    parts = [base[:delta.prefix]]
    data = delta.data
    for off, length, at in delta.ops:
        parts.append(data[at:at + length] if off < 0 else base[off:off + length])
    return b"".join(parts)
