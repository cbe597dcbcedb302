"""Which lines of a log hold a fact about a text (an event id, a node id, …): sorted
64-bit keys, one home for the mechanic behind the guard's committed-log index
(``guard.committed_log``) and the checks' saved log state (``logstate``).

A key is ``(table << 61) | (crc32(text) << 29) | line``: a table number (1…7), the crc32
of the UTF-8 text and a 1-based line number. All keys of one (table, text) are adjacent
and in line order, so a bisect finds the candidate lines; a key only says where to look,
and every caller confirms a candidate by parsing that one line, so a crc32 collision
never gives a wrong answer. Keys live in ``array('Q')``: cheap to store as raw words
(``guard.committed_log_cache``) and to load. An index that grew commit by commit holds `Keys`: one
sorted run per step, each run's lines after the previous run's, so a lookup searches
each run in turn (in line order, as one merged array would answer) and appended lines
never copy the keys before them.
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


class Keys:
    """Sorted runs of keys, the lines of each run after those of the runs before it
    (`runs`, no run empty): what `merged` gives. `origin` is the saved file the first
    runs were loaded from (``index_files``), which a save of the grown index may write
    a delta against; it is passed on to every index grown from this one."""

    __slots__ = ("runs", "origin")

    def __init__(self, runs: Iterable[array], origin: object = None) -> None:
        self.runs = tuple(run for run in runs if run)
        self.origin = origin

    def __bool__(self) -> bool:
        return bool(self.runs)

    def __len__(self) -> int:
        return sum(map(len, self.runs))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Keys, array)):
            return flat(self) == flat(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Keys({list(self.runs)!r})"


def runs_of(keys: array | Keys) -> tuple[array, ...]:
    """The sorted runs of `keys` (an array is one run)."""
    if type(keys) is Keys:
        return keys.runs
    return (keys,) if keys else ()


def candidates(keys: array | Keys, table: int, text: str) -> Iterator[int]:
    """Lines that may hold `text` in `table`, in line order (unconfirmed)."""
    base = key(table, text)
    top = base | LINE_MASK
    for run in runs_of(keys):
        i = bisect_left(run, base)
        n = len(run)
        while i < n and run[i] <= top:
            yield run[i] & LINE_MASK
            i += 1


def merged(old: array | Keys, new: list[int]) -> Keys:
    """`old` with the keys `new` (any order, all of lines after `old`'s) added as a
    run; `old` is not changed."""
    new.sort()
    origin = old.origin if type(old) is Keys else None
    return Keys((*runs_of(old), array("Q", new)), origin)


def flat(keys: array | Keys) -> array:
    """`keys` as one sorted array (a new one: the runs merged)."""
    runs = runs_of(keys)
    if not runs:
        return array("Q")
    out = array("Q", runs[0]) if isinstance(runs[0], array) else _copied(runs[0])
    for run in runs[1:]:
        out = _merge(out, run)
    return out


def _copied(run: memoryview) -> array:
    """A run read in place (a memoryview of 64-bit words, ``index_files``) as an array."""
    out = array("Q")
    out.frombytes(run.cast("B"))
    return out


def _merge(old: array, new: array) -> array:
    """Two sorted arrays as one: `new`'s keys inserted by bisection (C-speed slices),
    or sorted together when `new` is not small."""
    if len(new) * 16 > len(old):
        return array("Q", sorted(old + new))
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


class Offsets:
    """Line start offsets: the saved ones read in place (a memoryview of 64-bit words, as
    ``index_files`` maps them) and those added since, with an array's `len`, indexing,
    iteration, `extend` and `append`. Copying the saved ones into an array touched every
    page of them, for the few a check reads."""

    __slots__ = ("base", "tail")

    def __init__(self, base: memoryview | array, tail: array | None = None) -> None:
        self.base = base
        self.tail = array("Q") if tail is None else tail

    def __len__(self) -> int:
        return len(self.base) + len(self.tail)

    def __getitem__(self, i: int) -> int:
        n = len(self.base)
        if i < 0:
            i += n + len(self.tail)
            if i < 0:
                raise IndexError("offset index out of range")
        return self.base[i] if i < n else self.tail[i - n]

    def __iter__(self) -> Iterator[int]:
        yield from self.base
        yield from self.tail

    def extend(self, values: Iterable[int]) -> None:
        self.tail.extend(values)

    def append(self, value: int) -> None:
        self.tail.append(value)


def copy_offsets(offsets: array | Offsets) -> array | Offsets:
    """A copy that later growth of `offsets` leaves alone (saved words stay shared)."""
    if isinstance(offsets, Offsets):
        return Offsets(offsets.base, array("Q", offsets.tail))
    return array("Q", offsets)


def offset_words(offsets: array | Offsets, start: int = 0) -> memoryview:
    """The offsets from line `start` on (0-based) as contiguous 64-bit words."""
    if not isinstance(offsets, Offsets):
        return memoryview(offsets)[start:]
    n = len(offsets.base)
    if start >= n:
        return memoryview(offsets.tail)[start - n:]
    out = array("Q")
    out.frombytes(memoryview(offsets.base)[start:].cast("B"))
    out.extend(offsets.tail)
    return memoryview(out)
