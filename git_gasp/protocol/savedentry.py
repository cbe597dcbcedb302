"""The bytes of a local cache entry kept beside a log under the git dir (the end state of
``runtime/endstate.py``, the count of ``conformance/saved/counts.py``): one header line

    <magic> <python and marshal version> <CRC-32 of the log's first `size` bytes>
    <size> <their line count> <CRC-32 of the payload> <payload length>

then the payload, a tuple marshalled. Only the Python that wrote an entry reads it
(marshal's format is its own); anything odd decodes to None. Whether the log still
starts with the bytes the entry was made from is the caller's to check (`prefix_crc`).
"""

from __future__ import annotations

import marshal
import sys
import zlib

_PY = f"py{sys.version_info[0]}.{sys.version_info[1]}-m{marshal.version}".encode()


class Entry:
    """A decoded entry: the prefix it describes and its payload."""

    __slots__ = ("prefix_crc", "size", "lines", "payload")

    def __init__(self, prefix_crc: int, size: int, lines: int, payload: tuple) -> None:
        self.prefix_crc, self.size, self.lines, self.payload = prefix_crc, size, lines, payload


def encode(magic: bytes, prefix_crc: int, size: int, lines: int, payload: tuple) -> bytes:
    """The entry's bytes; raises ValueError for a payload marshal cannot hold."""
    body = marshal.dumps(payload)
    return b" ".join([magic, _PY, b"%08x" % prefix_crc, b"%d" % size, b"%d" % lines,
                      b"%08x" % zlib.crc32(body), b"%d" % len(body)]) + b"\n" + body


def _header(blob: bytes, magic: bytes) -> tuple[int, int, int, int, int, int] | None:
    """(prefix CRC, size, lines, payload CRC, payload length, payload offset) of an
    entry written by this Python with `magic`, else None."""
    end = blob.find(b"\n", 0, 200) + 1
    fields = blob[:end].split()
    if len(fields) != 7 or fields[0] != magic or fields[1] != _PY:
        return None
    try:
        numbers = [int(f, 16 if i in (2, 5) else 10) for i, f in enumerate(fields) if i > 1]
    except ValueError:
        return None
    if min(numbers) < 0:
        return None
    digest, size, lines, crc, length = numbers
    return digest, size, lines, crc, length, end


def _payload(blob: bytes, head: tuple[int, int, int, int, int, int], fields: int,
            ) -> tuple | None:
    """The marshalled tuple of `fields` items after `_header`'s `head`, or None when its
    length or CRC-32 is wrong or it is not such a tuple."""
    _digest, _size, _lines, crc, length, end = head
    body = memoryview(blob)[end:]
    if len(body) != length or zlib.crc32(body) != crc:
        return None
    try:
        saved = marshal.loads(body)
    except (ValueError, EOFError, TypeError):
        return None
    return saved if type(saved) is tuple and len(saved) == fields else None


def decode(blob: bytes, magic: bytes, fields: int) -> Entry | None:
    """The entry `blob` holds, its payload a tuple of `fields` items, or None."""
    head = _header(blob, magic) if blob else None
    saved = _payload(blob, head, fields) if head is not None else None
    return Entry(head[0], head[1], head[2], saved) if saved is not None else None


def prefix_crc(data: bytes, size: int) -> int | None:
    """The CRC-32 of `data`'s first `size` bytes (None: `data` is shorter)."""
    if len(data) < size:
        return None
    with memoryview(data) as view:
        return zlib.crc32(view[:size])
