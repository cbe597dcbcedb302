"""Waiting for a held lease: the `--wait[=SECONDS]` of the CLI writers.

Without a budget a held lease is refused at once (`Lease.ensure`'s LeaseHeld, the
message as it always was). With one, the lease is polled at jittered, growing
intervals (so writers that queued behind one sync do not all try in step) until it is
taken or the budget is spent; then one LeaseHeld line names the holder and how long
it waited. A corrupt or unreadable lease is never waited for.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from git_gasp.store import holder
from git_gasp.store.lease import Lease, LeaseHeld, LeaseRecord

POLL_MIN_S = 0.05
POLL_MAX_S = 0.5


def take(lease: Lease, wait_s: float | None = None, *,
         sleep: Callable[[float], None] = time.sleep,
         clock: Callable[[], float] = time.monotonic,
         rng: random.Random | None = None) -> LeaseRecord:
    """Hold `lease`, waiting up to `wait_s` seconds for its holder (None or 0: refuse at
    once); LeaseHeld naming the holder when it is still held."""
    if not wait_s or wait_s <= 0:
        return lease.ensure()
    rng = rng or random.Random()
    deadline = clock() + wait_s
    poll = POLL_MIN_S
    while True:
        try:
            return lease.ensure()
        except LeaseHeld:
            left = deadline - clock()
            if left <= 0:
                raise budget_spent(lease, wait_s) from None
            sleep(min(left, rng.uniform(poll / 2, poll)))
            poll = min(POLL_MAX_S, poll * 1.5)


def budget_spent(lease: Lease, wait_s: float) -> LeaseHeld:
    """The one line when `--wait` ran out: who still holds the lease, and what to do."""
    current = lease.read()
    who = current.describe() if current is not None else "another writer (it changed hands)"
    if current is not None and current.holder().state == holder.ALIVE:
        advice = f"wait longer (--wait=SECONDS) or stop pid {current.pid}"
    else:
        advice = ("wait longer (--wait=SECONDS); if that worker is gone, `git gasp lease "
                  "release --force` removes it")
    return LeaseHeld(f"lease still held by {who} after waiting {wait_s:g} s; "
                     f"{advice}")
