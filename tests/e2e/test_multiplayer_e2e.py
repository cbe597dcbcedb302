"""Two agents, two clones, one remote: both append, both push, no conflict on the log."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.testing.run import gasp, git, out

pytestmark = pytest.mark.slow  # two clones and a remote, end to end


def ok(proc) -> str:
    assert proc.returncode == 0, out(proc)
    return proc.stdout.decode().strip()


def agent_clone(remote: Path, where: Path) -> Path:
    git(where.parent, "clone", "-q", str(remote), where.name)
    ok(gasp(where, "install-hooks"))  # git config is per clone: every clone registers
    return where


def run_once(repo: Path, worker: str, title: str, monkeypatch) -> None:
    """One recorded run: a goal, a run with an observation, the boundary commit."""
    monkeypatch.setenv("GASP_WORKER_ID", worker)
    goal = ok(gasp(repo, "record", "goal", "--title", title))
    ok(gasp(repo, "run", "start", "--task", f"work on {title}", "--goal", goal))
    ok(gasp(repo, "record", "observation", "--summary", f"{worker} saw something"))
    ok(gasp(repo, "run", "finish", "--outcome", "done"))
    ok(gasp(repo, "commit-run"))


def event_ids(repo: Path) -> list[str]:
    data = (repo / "state" / "events.jsonl").read_text()
    return [json.loads(line)["id"] for line in data.splitlines()]


@pytest.mark.parametrize("pull", [["pull", "--no-rebase", "-q"], ["pull", "--rebase", "-q"]])
def test_two_agents_push_to_one_remote_without_a_conflict(tmp_path, monkeypatch, pull):
    origin = tmp_path / "origin"
    ok(gasp(tmp_path, "init", "origin", "--agent-id", "shared"))
    remote = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(origin), str(remote))
    alice = agent_clone(remote, tmp_path / "alice")
    bob = agent_clone(remote, tmp_path / "bob")

    run_once(alice, "alice", "alice's goal", monkeypatch)
    run_once(bob, "bob", "bob's goal", monkeypatch)
    git(alice, "push", "-q", "origin", "HEAD")
    rejected = subprocess.run(["git", "push", "-q", "origin", "HEAD"], cwd=bob,
                              capture_output=True)
    assert rejected.returncode != 0  # non-fast-forward: bob must integrate alice's run
    git(bob, *pull, "origin", "main")  # the driver unions both logs: no conflict
    git(bob, "push", "-q", "origin", "HEAD")
    git(alice, "pull", "-q", "--no-rebase", "origin", "main")

    ids = event_ids(bob)
    assert len(ids) == len(set(ids)), "an event was duplicated"
    assert set(event_ids(alice)) == set(ids), "an event was lost"
    for repo in (alice, bob):
        check = gasp(repo, "check")
        assert check.returncode == 0, out(check)
    goals = json.loads(ok(gasp(bob, "fold", "--json")))["nodes"]
    titles = {n["props"].get("title") for n in goals.values() if n["kind"] == "goal"}
    assert {"alice's goal", "bob's goal"} <= titles
