"""sync's backoff against a remote that always fails at once: whole-millisecond waits,
each at least the floor, a capped exponent, and a clean give-up when the budget is
spent — a bounded number of attempts for every budget, never a spin nor an overflow."""

from __future__ import annotations

import json
import random

import pytest

from git_gasp.sync.backoff import Backoff
from tests.testing.run import gasp, git

FLOOR_MS = 50  # backoff.FLOOR_MS: no wait is shorter (but the last, what is left)


def draw_all(backoff: Backoff, attempt_s: float, limit: int = 100_000) -> list[float]:
    waits = []
    while (w := backoff.next_wait(attempt_s)) is not None and len(waits) < limit:
        waits.append(w)
    return waits


@pytest.mark.parametrize("budget", [0.02, 0.3, 2, 5, 120])
@pytest.mark.parametrize("seed", range(5))
def test_a_fast_failing_attempt_draws_a_bounded_number_of_floored_waits(budget, seed):
    waits = draw_all(Backoff(max_wait_s=budget, rng=random.Random(seed)), attempt_s=0.0004)
    budget_ms = round(budget * 1000)
    assert len(waits) <= budget_ms // FLOOR_MS + 1
    assert all(w * 1000 >= FLOOR_MS for w in waits[:-1])  # the last may be what is left
    assert round(sum(w * 1000 for w in waits)) <= budget_ms
    assert budget_ms - round(sum(w * 1000 for w in waits)) < FLOOR_MS  # spent, then None


def test_a_late_retry_number_never_overflows():
    b = Backoff(max_wait_s=10**6)
    assert b.ceiling(1025) == b.ceiling(10**9) == 8.0
    assert b.ceiling(1) == 0.25


@pytest.mark.parametrize("budget", ["inf", "1e308"])
def test_an_endless_budget_is_a_bounded_one(budget):
    b = Backoff(max_wait_s=float(budget), rng=random.Random(0))
    assert 0.05 <= b.next_wait(0.001) <= 0.25


@pytest.mark.slow
@pytest.mark.parametrize("budget", ["0.2", "1", "2"])
def test_sync_against_a_dead_remote_gives_up_at_the_budget(agent, tmp_path, budget):
    git(agent, "remote", "add", "origin", str(tmp_path / "nowhere.git"))
    proc = gasp(agent, "sync", "--json", "--max-wait", budget)
    assert proc.returncode == 6, proc.stderr.decode()  # gave up; no recovery ref either
    said = json.loads(proc.stdout)
    budget_ms = round(float(budget) * 1000)
    assert 2 <= said["attempts"] <= budget_ms // FLOOR_MS + 1
    assert len(said["waits"]) == said["retries"] == said["attempts"] - 1
    assert all(w * 1000 >= FLOOR_MS for w in said["waits"][:-1])
    assert round(sum(w * 1000 for w in said["waits"])) <= budget_ms
    assert f"the --max-wait budget of {budget} s is spent" in said["reason"]
    err = proc.stderr.decode()
    assert err.startswith("git gasp: error: sync gave up") and err.count("\n") == 1
    assert "Traceback" not in err
