"""`git gasp lease status|release` and a write after a holder died, as a user sees them."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys

import pytest

from git_gasp.store import holder
from tests.testing.run import gasp, out

pytestmark = pytest.mark.slow  # a child process and several CLI runs per test

DATE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d{4}")
RUNNER = r"""
import sys, time
from git_gasp.runtime.state import AgentState
state = AgentState.open(sys.argv[1], "child")
if sys.argv[2] == "run":
    print(state.start_run("crashes"), flush=True)
else:
    state.store.lease.ensure()
    print("-", flush=True)
time.sleep(60)
"""


def _crashed_child(agent, mode: str) -> tuple[int, str]:
    """A child that takes the lease (and opens a run, with `mode` "run"), then is
    SIGKILLed; returns its pid and run id."""
    proc = subprocess.Popen([sys.executable, "-c", RUNNER, str(agent), mode],
                            stdout=subprocess.PIPE)
    assert proc.stdout is not None
    run_id = proc.stdout.readline().decode().strip()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return proc.pid, run_id


def test_status_shows_host_pid_liveness_and_a_date(agent):
    proc = gasp(agent, "lease", "status")
    assert out(proc).strip() == "no lease"
    assert json.loads(gasp(agent, "lease", "status", "--json").stdout) == {"held": False}
    pid, _ = _crashed_child(agent, "lease")
    text = out(gasp(agent, "lease", "status")).strip()
    assert text.startswith(f"stale: child (pid {pid} on {holder.this_host()}, no longer running")
    assert DATE.search(text) and "the next writer takes it over" in text
    obj = json.loads(gasp(agent, "lease", "status", "--json").stdout)
    assert obj["held"] is False and obj["alive"] is False and obj["pid"] == pid
    assert obj["host"] == holder.this_host() and DATE.fullmatch(obj["expires_at"])
    assert obj["expired"] is False and type(obj["expires_at_ms"]) is int


def test_release_of_a_crashed_runs_lease_says_what_became_of_the_run(agent):
    pid, run_id = _crashed_child(agent, "run")
    assert run_id.startswith("run_")
    proc = gasp(agent, "lease", "release")  # no --force
    text = out(proc)
    assert proc.returncode == 0, text
    assert f"released the stale lease of child (pid {pid}" in text and "no longer running" in text
    assert f"its unfinished run {run_id} stays open and the next writer resumes it" in text
    assert out(gasp(agent, "lease", "status")).strip() == "no lease"


def test_a_write_takes_over_a_dead_holders_lease_and_says_so(agent):
    pid, run_id = _crashed_child(agent, "run")
    proc = gasp(agent, "record", "observation", "--summary", "after the crash")
    err = proc.stderr.decode()
    assert proc.returncode == 0, out(proc)
    assert f"note: took over the lease of child (pid {pid}" in err and "no longer running" in err
    assert f"its unfinished run {run_id} is resumed" in err
    status = json.loads(gasp(agent, "run", "status", "--json").stdout)
    assert status["run"]["id"] == run_id


def test_a_live_holder_on_another_host_is_refused_with_the_way_out(agent):
    (agent / ".agent" / "lease").write_text(json.dumps(
        {"worker_id": "w@far", "pid": 1, "expires_at_ms": 2**42, "host": "far.example"}))
    proc = gasp(agent, "record", "observation", "--summary", "x")
    err = proc.stderr.decode()
    assert proc.returncode == 1 and err.count("\n") == 1, err
    assert "on another host" in err and "git gasp lease release --force" in err
    assert "4398046511104" not in err and DATE.search(err)
    proc = gasp(agent, "lease", "release")
    assert proc.returncode == 1 and "--force removes it anyway" in out(proc)
    proc = gasp(agent, "lease", "release", "--force")
    assert proc.returncode == 0 and "released w@far" in out(proc)
