"""First-match lookup over line ranges: which of many (possibly overlapping) ranges,
taken in the order given, is the first to contain a line.

Built once by a sweep over the ranges' ends with a heap keyed by that order, into
disjoint sorted segments each naming its first range; a lookup is one bisection. So
`n` ranges cost O(n log n) once and O(log n) a line, where testing every range for
every line costs O(lines * n) (blame of a 10,000-line file against 200,000 imported
ranges, `bench/bench_blame.py --ranges`).
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from collections.abc import Iterable
from typing import Any


class FirstMatch:
    """The first of `ranges` ((start, end, value), both ends included, in priority
    order) containing a line."""

    def __init__(self, ranges: Iterable[tuple[int, int, Any]]) -> None:
        values: list[Any] = []
        items: list[tuple[int, int, int]] = []  # (start, end, priority)
        for s, e, v in ranges:
            if s <= e:
                items.append((s, e, len(values)))
                values.append(v)
        items.sort()
        bounds = sorted({s for s, _, _ in items}.union(e + 1 for _, e, _ in items))
        starts: list[int] = []
        ends: list[int] = []
        firsts: list[int] = []
        heap: list[tuple[int, int]] = []  # (priority, end) of the ranges begun
        push, pop = heapq.heappush, heapq.heappop
        j, n = 0, len(items)
        for k in range(len(bounds) - 1):
            at = bounds[k]
            while j < n and items[j][0] <= at:
                push(heap, (items[j][2], items[j][1]))
                j += 1
            while heap and heap[0][1] < at:
                pop(heap)  # ended before here (whichever were first)
            if not heap:
                continue
            first = heap[0][0]
            if ends and ends[-1] == at - 1 and firsts[-1] == first:
                ends[-1] = bounds[k + 1] - 1  # the same range goes on
            else:
                starts.append(at)
                ends.append(bounds[k + 1] - 1)
                firsts.append(first)
        self._starts, self._ends = starts, ends
        self._values = [values[i] for i in firsts]

    def __call__(self, line: int) -> Any:
        """The value of the first range containing `line`, or None."""
        k = bisect_right(self._starts, line) - 1
        return self._values[k] if k >= 0 and line <= self._ends[k] else None
