"""Loose objects read through dulwich, their size bounded before inflating.

A loose object is ``<type> <size>\\0<content>``, zlib-compressed; a file of 1 MiB can
inflate to 1 GiB whatever its header says. Here the header is read from the file's
first bytes (64 at most inflated), then dulwich reads the object with its inflation
bounded by that declared size (``ShaFile.from_path(max_size=...)``): content longer
than declared, shorter than declared, a malformed header or a broken stream is a
refusal (`ObjectRefused`, naming the object), as git's ``cat-file`` refuses them.
Bytes after the zlib stream are not read, as git's readers (``cat-file``, ``show``,
``log``) do not read them: the object is its stream, whose content its id hashes; only
``git fsck`` calls such a file corrupt ("garbage at end of loose object"), a verdict on
the file, not on the history check 4 judges.
"""

from __future__ import annotations

import zlib

from git_gasp.base.files import open_file

TYPES = {b"commit": 1, b"tree": 2, b"blob": 3, b"tag": 4}
_HEADER_MAX = 64  # "<type> <size>\0": git's own header buffer is smaller
_PEEK = 512  # compressed bytes read for the header


class ObjectRefused(Exception):  # noqa: N818 - the odb's verdict, not a bug
    """An object read as git refuses it: its stream lies about its size, is cut short,
    or is not zlib; the message names the object."""


def loose_header(head: bytes, what: str) -> tuple[int, int, int]:
    """(type number, declared size, where the content starts) of a loose object's
    first inflated bytes `head`."""
    kind, sp, rest = head.partition(b" ")
    size_text, nul, _ = rest.partition(b"\0")
    type_num = TYPES.get(kind)
    if not sp or not nul or type_num is None or not size_text.isdigit() \
            or (size_text[:1] == b"0" and size_text != b"0") or len(size_text) > 19:
        raise ObjectRefused(f"{what} has a malformed header {head[:32]!r}")
    return type_num, int(size_text), len(kind) + len(size_text) + 2


def peek(path: str, what: str) -> tuple[int, int, int]:
    """(type number, declared size, header length) of the loose object file at `path`,
    from its first bytes (at most 64 inflated)."""
    with open_file(path) as f:
        start = f.read(_PEEK)
    try:
        head = zlib.decompressobj().decompress(start, _HEADER_MAX)
    except zlib.error as exc:
        raise ObjectRefused(f"{what} is not a zlib stream ({exc})") from None
    return loose_header(head, what)


def read_loose(path: str, what: str, limit: int | None = None
               ) -> tuple[int, bytes] | None:
    """(type number, content) of the loose object file at `path` (`what` names it in
    a refusal); None when its header declares more than `limit` bytes (nothing more
    is inflated). dulwich inflates it no further than the declared size."""
    from dulwich.objects import ShaFile

    type_num, size, start = peek(path, what)
    if limit is not None and size > limit:
        return None
    try:
        obj = ShaFile.from_path(path, max_size=start + size)
        data = obj.as_raw_string()
    except zlib.error as exc:  # past its declared size, or a broken stream
        raise ObjectRefused(f"{what} holds more than the {size} bytes its header "
                            f"declares, or is not a zlib stream ({exc})") from None
    except Exception as exc:  # noqa: BLE001 - dulwich's parsers raise several types
        raise ObjectRefused(f"{what} is unreadable ({exc})") from None
    if obj.type_num != type_num or len(data) != size:
        raise ObjectRefused(f"{what} holds {len(data)} bytes, its header declares {size}")
    return type_num, data
