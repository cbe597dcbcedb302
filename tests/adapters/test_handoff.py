"""The pending hand-off of `git gasp resume`: the next new session of its agent takes it
once, and its run records derived_from the old run in the run.started write; another
agent's session, a later session, an expired hand-off or one bound to another process
leave it (or drop it) and record nothing."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from git_gasp.adapters.agent_hook import handoff
from git_gasp.adapters.live import gasp_dir, run_hook
from git_gasp.adapters.session_writer import run_id_for
from tests.testing.run import gasp, out


def _old_run(repo: Path) -> str:
    run = gasp(repo, "run", "start", "--task", "the first session").stdout.decode().strip()
    assert gasp(repo, "run", "finish", "--outcome", "patched").returncode == 0
    return run


def _start(repo: Path, agent: str, session: str) -> str:
    payload = {"session_id": session, "cwd": str(repo), "hook_event_name": "SessionStart",
               "source": "startup", "model": "mock-model"}
    what = run_hook(json.dumps(payload).encode(), agent=agent, repo=str(repo))
    assert what.startswith("recorded"), what
    return run_id_for(agent, session)


def _fold(repo: Path) -> dict:
    proc = gasp(repo, "fold", "--json")
    assert proc.returncode == 0, out(proc)
    return json.loads(proc.stdout)


def _derived(repo: Path) -> set[tuple[str, str]]:
    return {(r["from"], r["to"]) for r in _fold(repo)["relations"] if r["rel"] == "derived_from"}


@pytest.mark.slow  # CLI runs and hook drains in a real repo
def test_the_next_session_of_the_agent_takes_it_once(agent):
    old = _old_run(agent)
    gdir = gasp_dir(agent)
    handoff.write(gdir, "codex", old)
    other = _start(agent, "claude-code", "s-claude")  # another agent: not its hand-off
    assert os.path.exists(handoff.handoff_path(gdir, "codex"))
    new = _start(agent, "codex", "s-codex-1")
    later = _start(agent, "codex", "s-codex-2")
    assert _derived(agent) == {(new, old)}
    assert not os.path.exists(handoff.handoff_path(gdir, "codex"))
    graph = _fold(agent)
    assert graph["nodes"][new]["props"]["derived_from"] == old
    assert "derived_from" not in graph["nodes"][later]["props"]
    assert "derived_from" not in graph["nodes"][other]["props"]
    started = [json.loads(line) for line in (agent / "state/events.jsonl").read_text()
               .splitlines() if '"run.started"' in line]
    assert [e["payload"].get("derived_from") for e in started] == [None, None, old, None]
    assert gasp(agent, "check").returncode == 0
    # the recap tells the hand-off both ways
    recap = json.loads(gasp(agent, "recap", old, "--json").stdout)["runs"][0]
    assert recap["continued_by"] == [new]
    assert json.loads(gasp(agent, "recap", new, "--json").stdout)["runs"][0][
        "derived_from"] == [old]


@pytest.mark.slow  # CLI runs and hook drains in a real repo
def test_an_expired_hand_off_is_dropped(agent):
    old = _old_run(agent)
    gdir = gasp_dir(agent)
    handoff.write(gdir, "codex", old, ttl_ms=-1)
    _start(agent, "codex", "s-late")
    assert _derived(agent) == set()
    assert not os.path.exists(handoff.handoff_path(gdir, "codex"))


@pytest.mark.slow  # CLI runs and hook drains in a real repo
def test_a_hand_off_for_a_run_not_in_the_log_records_nothing(agent):
    gdir = gasp_dir(agent)
    handoff.write(gdir, "codex", "run_elsewhere")
    new = _start(agent, "codex", "s-1")
    assert _derived(agent) == set() and new in _fold(agent)["nodes"]


@pytest.fixture
def child():
    proc = subprocess.Popen(["sleep", "60"])
    yield proc
    proc.kill()
    proc.wait()


def test_a_bound_hand_off_goes_only_to_its_process(tmp_path, child):
    gdir = str(tmp_path / "gasp")
    # bound to this process: a session whose agent runs under it takes it
    handoff.write(gdir, "codex", "run_a", pid=os.getpid())
    assert handoff.take(gdir, "codex", child.pid) == "run_a"
    assert handoff.take(gdir, "codex", child.pid) is None  # once
    # bound to the child: a session of another process leaves it
    handoff.write(gdir, "codex", "run_b", pid=child.pid)
    assert handoff.take(gdir, "codex", os.getpid()) is None
    assert handoff.read(gdir, "codex")["from_run"] == "run_b"
    # once that process is gone, nobody takes it and it is dropped
    child.kill()
    child.wait()
    assert handoff.take(gdir, "codex", os.getpid()) is None
    assert handoff.read(gdir, "codex") is None


def test_an_unreadable_hand_off_is_none(tmp_path):
    gdir = tmp_path / "gasp"
    path = Path(handoff.handoff_path(str(gdir), "codex"))
    path.parent.mkdir(parents=True)
    path.write_text("not json")
    assert handoff.take(str(gdir), "codex", None) is None
