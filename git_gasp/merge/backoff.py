"""Bounded, jittered exponential backoff between `git gasp sync` attempts.

Retry k (k = 1 for the wait before the second attempt) waits a uniformly random time
in ``[0, min(unit * 2**(k-1), STEP_CAP_S, budget left)]`` ("full jitter": clones that
were rejected together spread out instead of retrying in step), where `unit` is the
longer of BASE_S and the duration of the attempt that just failed: the attempts of
the other clones take about as long, so waits shorter than one would collide again. `max_wait_s`
is the budget of all the waits of one sync together: once it is spent no further
attempt is made, whatever ``--attempts`` allows (0: retry at once, never wait).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

BASE_S = 0.25  # the first retry's ceiling
STEP_CAP_S = 8.0  # no single wait is longer than this
DEFAULT_MAX_WAIT_S = 120.0  # enough that 8 writers on one remote never give up (bench_sync)


@dataclass
class Backoff:
    """The waits of one sync: `next_wait` draws the next one (None: budget spent)."""

    max_wait_s: float = DEFAULT_MAX_WAIT_S
    base_s: float = BASE_S
    step_cap_s: float = STEP_CAP_S
    rng: random.Random = field(default_factory=random.Random)
    waits: list[float] = field(default_factory=list)
    attempt_s: float = 0.0  # how long the last attempt took (`next_wait` scales with it)

    @property
    def spent(self) -> float:
        """Seconds drawn so far."""
        return sum(self.waits)

    def ceiling(self, retry: int) -> float:
        """The longest wait retry number `retry` (1-based) may draw."""
        unit = max(self.base_s, self.attempt_s)
        step = min(unit * 2 ** max(0, retry - 1), self.step_cap_s)
        return max(0.0, min(step, self.max_wait_s - self.spent))

    def next_wait(self, attempt_s: float | None = None) -> float | None:
        """The wait before the next attempt (`attempt_s`: how long the failed one took),
        recorded; None when the budget is spent."""
        if attempt_s is not None:
            self.attempt_s = attempt_s
        if self.max_wait_s <= 0:
            return self._keep(0.0)  # no budget to wait: retry at once
        if self.spent >= self.max_wait_s:
            return None
        return self._keep(self.rng.uniform(0.0, self.ceiling(len(self.waits) + 1)))

    def _keep(self, wait: float) -> float:
        self.waits.append(round(wait, 3))
        return self.waits[-1]
