"""Waiting for a held lease (`store.lease_wait.take`, the CLI's `--wait[=SECONDS]`):
without a budget a held lease is refused at once with the message it always had; with
one the lease is polled at jittered intervals until it is free or the budget is spent,
then one line names the holder. A fake clock: nothing here depends on real time."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from git_gasp.store.lease import Lease, LeaseCorrupt, LeaseHeld
from git_gasp.store.lease_wait import POLL_MAX_S, take

HOLDER = r"""
import sys
from git_gasp.store.lease import Lease
lease = Lease(sys.argv[1], sys.argv[2])
lease.ensure()
print("held", flush=True)
sys.stdin.readline()  # released when the test says so
lease.release()
print("released", flush=True)
sys.stdin.readline()
"""


class Holder:
    """Another process holding the lease as `worker` until `release()`."""

    def __init__(self, agent, worker: str = "holder") -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(agent), worker],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline().strip() == "held"

    @property
    def pid(self) -> int:
        return self.proc.pid

    def release(self) -> None:
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline().strip() == "released"

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


@pytest.fixture
def held(agent):
    holder = Holder(agent)
    yield holder
    holder.close()


class Clock:
    """A fake monotonic clock that `sleep` advances; `on_sleep` runs after each sleep."""

    def __init__(self, on_sleep=None) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []
        self.on_sleep = on_sleep

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0
        self.sleeps.append(seconds)
        self.now += seconds
        if self.on_sleep is not None:
            self.on_sleep(len(self.sleeps))


def test_without_a_budget_a_held_lease_is_refused_at_once_as_before(agent, held):
    clock = Clock()
    for budget in (None, 0):
        with pytest.raises(LeaseHeld) as exc:
            take(Lease(agent, "me"), budget, sleep=clock.sleep, clock=clock)
        assert str(exc.value).startswith("lease held by holder (pid ")
        assert "wait for it to finish" in str(exc.value)
    assert clock.sleeps == []


def test_a_writer_with_a_budget_waits_until_the_holder_lets_go(agent, held):
    clock = Clock(on_sleep=lambda n: held.release() if n == 3 else None)
    rec = take(Lease(agent, "me"), 30, sleep=clock.sleep, clock=clock, rng=random.Random(1))
    assert rec.worker_id == "me" and len(clock.sleeps) == 3


def test_when_the_budget_runs_out_one_line_names_the_holder(agent, held):
    clock = Clock()
    with pytest.raises(LeaseHeld) as exc:
        take(Lease(agent, "me"), 5, sleep=clock.sleep, clock=clock, rng=random.Random(2))
    message = str(exc.value)
    assert "\n" not in message
    assert message.startswith("lease still held by holder (pid ")
    assert f"stop pid {held.pid}" in message and "after waiting 5 s" in message
    assert sum(clock.sleeps) == pytest.approx(5)  # the whole budget, never more


def test_polls_are_jittered_grow_and_stay_short(agent, held):
    clock = Clock()
    with pytest.raises(LeaseHeld):
        take(Lease(agent, "me"), 20, sleep=clock.sleep, clock=clock, rng=random.Random(3))
    polls = clock.sleeps[:-1]  # the last one is cut to what was left
    assert len(set(polls)) == len(polls)  # jittered: no two alike
    assert max(polls) <= POLL_MAX_S and polls[0] < POLL_MAX_S / 2


def test_a_corrupt_lease_is_not_waited_for(agent):
    (agent / ".agent").mkdir(exist_ok=True)
    (agent / ".agent" / "lease").write_text("not a lease\n")
    clock = Clock()
    with pytest.raises(LeaseCorrupt):
        take(Lease(agent, "me"), 30, sleep=clock.sleep, clock=clock)
    assert clock.sleeps == []
