"""Which lines of a log hold a fact about a text (an event id, a node id, …): sorted
64-bit keys, one home for the mechanic behind the guard's committed-log index
(``committed_log``) and the checks' saved log state (``logstate``).

A key is ``(table << 61) | (crc32(text) << 29) | line``: a table number (1…7), the crc32
of the UTF-8 text and a 1-based line number. All keys of one (table, text) are adjacent
and in line order, so a bisect finds the candidate lines; a key only says where to look,
and every caller confirms a candidate by parsing that one line, so a crc32 collision
never gives a wrong answer. Keys live in ``array('Q')``: cheap to store as raw words
(``index_cache``), to load, and to merge with the keys of appended lines.
"""

from __future__ import annotations

import zlib
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator
from itertools import accumulate

TABLE_SHIFT, HASH_SHIFT = 61, 29
LINE_MASK = (1 << HASH_SHIFT) - 1
_PLUS_ONE = (1).__add__
MAX_LINES = LINE_MASK  # a log with more lines cannot be indexed (it would be > 50 GB)


class TooLarge(Exception):
    """The log has more lines than an index can address."""


def key(table: int, text: str) -> int:
    """The key of `text` in `table`, for line 0 (or it with a line number)."""
    crc = zlib.crc32(text.encode("utf-8", "surrogatepass"))
    return (table << TABLE_SHIFT) | (crc << HASH_SHIFT)


def candidates(keys: array, table: int, text: str) -> Iterator[int]:
    """Lines that may hold `text` in `table`, in line order (unconfirmed)."""
    base = key(table, text)
    i = bisect_left(keys, base)
    top = base | LINE_MASK
    n = len(keys)
    while i < n and keys[i] <= top:
        yield keys[i] & LINE_MASK
        i += 1


def merged(old: array, new: list[int]) -> array:
    """`old` (sorted) with the keys `new` (any order) merged in; `old` is not changed."""
    new.sort()
    if not old:
        return array("Q", new)
    out = array("Q")
    at = 0
    for k in new:
        pos = bisect_right(old, k, at)
        out.extend(old[at:pos])
        out.append(k)
        at = pos
    out.extend(old[at:])
    return out


def line_starts(start: int, lines: Iterable[bytes]) -> Iterator[int]:
    """`start`, then the offset after each of `lines` (newline-terminated, back to back
    from `start`): pass all but the last line to get where each line begins."""
    return accumulate(map(_PLUS_ONE, map(len, lines)), initial=start)


def check_capacity(line_count: int) -> None:
    """Raise TooLarge when an index cannot address `line_count` lines."""
    if line_count > MAX_LINES:
        raise TooLarge(f"more than {MAX_LINES} lines")
