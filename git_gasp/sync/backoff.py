"""Bounded, jittered exponential backoff between `git gasp sync` attempts.

Retry k (k = 1 for the wait before the second attempt) waits a uniformly random whole
number of milliseconds in ``[FLOOR_MS, min(unit * 2**(k-1), STEP_CAP, budget left)]``
("full jitter" above a floor: clones that were rejected together spread out instead of
retrying in step, and no retry follows the failed attempt at once), where `unit` is the
longer of BASE and the duration of the attempt that just failed: the attempts of the
other clones take about as long, so waits shorter than one would collide again. The
exponent stops at MAX_DOUBLINGS (the step cap is reached long before), so no retry
number overflows. `max_wait_s` is the budget of all the waits of one sync together,
kept in integer milliseconds: once less than the floor is left no further attempt is
made, whatever ``--attempts`` allows, so a sync makes at most ``budget / FLOOR_MS + 1``
attempts (0: retry at once, never wait).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

BASE_MS = 250  # the first retry's ceiling
STEP_CAP_MS = 8_000  # no single wait is longer than this
FLOOR_MS = 50  # nor shorter than this (or the budget left, when that is less)
MAX_DOUBLINGS = 16  # 250 ms * 2**16 is far past the step cap
MAX_BUDGET_MS = 10**12  # ~31 years: a larger (or infinite) --max-wait is this
BASE_S = BASE_MS / 1000
STEP_CAP_S = STEP_CAP_MS / 1000
DEFAULT_MAX_WAIT_S = 120.0  # enough that 8 writers on one remote never give up (bench_sync)


def to_ms(seconds: float) -> int:
    """`seconds` as whole milliseconds in [0, MAX_BUDGET_MS] (NaN: 0)."""
    if not seconds > 0:
        return 0
    return MAX_BUDGET_MS if seconds * 1000 >= MAX_BUDGET_MS else round(seconds * 1000)


@dataclass
class Backoff:
    """The waits of one sync: `next_wait` draws the next one (None: budget spent)."""

    max_wait_s: float = DEFAULT_MAX_WAIT_S
    base_s: float = BASE_S
    step_cap_s: float = STEP_CAP_S
    rng: random.Random = field(default_factory=random.Random)
    waits: list[float] = field(default_factory=list)
    attempt_s: float = 0.0  # how long the last attempt took (`next_wait` scales with it)
    spent_ms: int = 0  # the waits drawn so far, in whole milliseconds

    @property
    def spent(self) -> float:
        """Seconds drawn so far."""
        return self.spent_ms / 1000

    def _ceiling_ms(self, retry: int) -> int:
        unit = max(to_ms(self.base_s), to_ms(self.attempt_s), 1)
        step = min(unit << min(max(0, retry - 1), MAX_DOUBLINGS), to_ms(self.step_cap_s))
        return max(0, min(step, to_ms(self.max_wait_s) - self.spent_ms))

    def ceiling(self, retry: int) -> float:
        """The longest wait retry number `retry` (1-based) may draw, in seconds."""
        return self._ceiling_ms(retry) / 1000

    def next_wait(self, attempt_s: float | None = None) -> float | None:
        """The wait in seconds before the next attempt (`attempt_s`: how long the failed
        one took), recorded; None when the budget is spent."""
        if attempt_s is not None:
            self.attempt_s = attempt_s
        budget = to_ms(self.max_wait_s)
        if budget == 0:
            return self._keep(0)  # no budget to wait: retry at once
        if budget - self.spent_ms < min(FLOOR_MS, budget):
            return None
        floor = min(FLOOR_MS, budget - self.spent_ms)
        ceiling = max(floor, self._ceiling_ms(len(self.waits) + 1))
        return self._keep(self.rng.randint(floor, ceiling))

    def _keep(self, wait_ms: int) -> float:
        self.spent_ms += wait_ms
        self.waits.append(wait_ms / 1000)
        return self.waits[-1]
