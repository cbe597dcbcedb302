"""Delta instructions parsed (never applied), for the pack prover: dulwich reads the
pack entries (`odb.packs`) and applies deltas; it has no public parser of a delta's
instructions, which the prover reads to prove appends without building versions.

A delta entry (an OFS_DELTA names its base by a backward offset in the same pack, a
REF_DELTA by object id) inflates to delta data, which starts with the base's and the
target's sizes (varints), then instructions: a copy of a range of the base, or an
insert of literal bytes.
"""

from __future__ import annotations

import bisect
from array import array
from collections import namedtuple

from git_gasp.protocol.appendonly import common_prefix_len

BLOB, OFS_DELTA, REF_DELTA = 3, 6, 7


class PackFormatError(Exception):
    """A pack entry or delta that does not parse as git writes them."""


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
