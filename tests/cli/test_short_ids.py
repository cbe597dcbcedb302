"""Short ids everywhere ids are printed: `lineage`, `run status` and `fold` print the
abbreviations `log` prints (among every id of the log), honour `--abbrev`, keep full ids
in `--json`, and every short id they print is typed back as printed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from git_gasp.runtime.state import AgentState
from tests.testing.run import gasp, out

pytestmark = pytest.mark.slow  # many CLI runs

SHORT = re.compile(r"\b[a-z_]+_\.\.\.[0-9a-f-]+\b")


def ok(repo: Path, *args: str) -> str:
    proc = gasp(repo, *args)
    assert proc.returncode == 0, out(proc)
    return proc.stdout.decode()


@pytest.fixture
def busy(agent) -> Path:
    """Goals minted in the same second (ids sharing their time-ordered start), an open
    run serving one, with a patch, its eval and a decision, and a second goal's run."""
    with AgentState.open(agent, worker_id="w") as state:
        goals = [state.record_goal(f"g{i}") for i in range(8)]
        run = state.start_run("fix", goal=goals[0])
        patch = state.propose_patch("p", advances=goals[0], commit="abc1234")
        state.record_eval("pytest", "Passed", validates=patch)
        state.record_decision("Approved", "green", patch=patch)
        assert state.run is not None and state.run.run_id == run
    return agent


def lineage_root(repo: Path, node: str) -> str:
    """The first line of `lineage NODE`: `# Lineage of `<short id>` (...)`."""
    return ok(repo, "lineage", node).splitlines()[0]


def test_every_short_id_lineage_and_run_status_print_resolves(busy):
    status = ok(busy, "run", "status")
    full = json.loads(ok(busy, "run", "status", "--json"))["run"]
    run_short, goal_short = SHORT.findall(status)
    assert run_short.startswith("run_...") and full["id"].endswith(run_short[7:])
    assert goal_short.startswith("goal_...") and full["goal_id"].endswith(goal_short[8:])
    assert full["id"] not in status and len(status) < len(full["id"]) + len(full["goal_id"])

    printed = set(SHORT.findall(status))
    shown = ok(busy, "lineage", goal_short)
    printed |= set(SHORT.findall(shown))
    assert {s.partition("_...")[0] for s in printed} == {
        "run", "goal", "patch", "eval", "decision"}, shown
    ids = {n["id"] for n in json.loads(ok(busy, "lineage", full["goal_id"], "--json"))["nodes"]}
    assert not any(i in shown for i in ids), "the human lineage prints short ids only"
    for short in sorted(printed):  # each names its node again, and is printed as typed
        assert lineage_root(busy, short).startswith(f"# Lineage of `{short}` ")
        assert lineage_root(busy, short.replace("...", "…")) == lineage_root(busy, short)


def test_fold_prints_short_ids_that_resolve(busy):
    shown = ok(busy, "fold")
    (through,) = re.findall(r"last (event_\.\.\.[0-9a-f-]+) \(line", shown)
    goals = re.findall(r"^  (goal_\.\.\.[0-9a-f-]+)  \[", shown, re.MULTILINE)
    assert len(goals) == 8 and len(set(goals)) == 8, shown
    for short in goals:
        assert lineage_root(busy, short).startswith(f"# Lineage of `{short}` ")
    events = [json.loads(line)["id"] for line in ok(busy, "log", "--json", "--ops").splitlines()]
    full, early = events[-1], events[0]
    assert full.endswith(through.partition("...")[2])
    assert ok(busy, "fold", "--at", through, "--json") == ok(busy, "fold", "--json")
    assert ok(busy, "snapshot", "--at", through)
    assert (busy / "snapshots" / full / "graph.json").is_file()
    at = ok(busy, "fold", "--at", early)
    (through_early,) = re.findall(r"last (event_\.\.\.[0-9a-f-]+) \(line", at)
    assert early.endswith(through_early.partition("...")[2])


def test_abbrev_sets_the_least_tail_everywhere(busy):
    for args in (("run", "status"), ("fold",)):
        tails = [s.partition("...")[2] for s in SHORT.findall(ok(busy, *args, "--abbrev", "12"))]
        assert tails and all(len(t) >= 12 for t in tails), args
    goal = json.loads(ok(busy, "run", "status", "--json"))["run"]["goal_id"]
    shown = ok(busy, "lineage", goal, "--abbrev", "12")
    tails = [s.partition("...")[2] for s in SHORT.findall(shown)]
    assert tails and all(len(t) >= 12 for t in tails)
    for short in SHORT.findall(shown):
        assert lineage_root(busy, short).startswith("# Lineage of `")
    proc = gasp(busy, "lineage", goal, "--abbrev", "0")
    assert proc.returncode == 2 and "--abbrev" in out(proc)
