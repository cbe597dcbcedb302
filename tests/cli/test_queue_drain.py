"""A command right after a session sees every event: what the agent hooks queued (their
drainers not done yet) is recorded before any command but the hook's own reads the
state; `doctor`, which reports the queue, leaves it as it is."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from git_gasp.adapters.agent_hook.queue_files import enqueue, queued
from tests.testing.run import gasp, out


def _queue_session(agent, sid: str) -> str:
    gdir = str(agent / ".git" / "gasp")
    base = {"session_id": sid, "cwd": str(agent)}
    for row in (dict(base, hook_event_name="SessionStart"),
                dict(base, hook_event_name="UserPromptSubmit", prompt="Write the docs")):
        enqueue(gdir, "claude-code", json.dumps(row).encode())
    return gdir


def test_log_right_after_a_session_shows_the_queued_events(agent):
    gdir = _queue_session(agent, "s-log")
    doctor = gasp(agent, "doctor")
    assert len(queued(gdir)) == 2, out(doctor)  # doctor reports it, leaves it
    proc = gasp(agent, "log")
    assert proc.returncode == 0, out(proc)
    assert "Write the docs" in out(proc)
    assert not queued(gdir)


def test_from_a_subdirectory_too(agent):
    gdir = _queue_session(agent, "s-sub")
    proc = gasp(agent / "state", "status")
    assert proc.returncode == 0, out(proc)
    assert not queued(gdir)


DRAINER = """
import os, sys, time
from git_gasp.base.fileops import try_lock
from git_gasp.store.lease import Lease
gdir, root = sys.argv[1], sys.argv[2]
with try_lock(os.path.join(gdir, "hook.lock"), 5) as got:
    assert got
    lease = Lease(root, f"git-gasp-hook-{os.getpid()}")
    lease.ensure()
    print("ready", flush=True)
    time.sleep(1.5)  # recording the entries it took out of the queue
    lease.release()
"""


@pytest.mark.slow  # over half a second: out of the fast loop
def test_a_write_waits_for_a_drainer_that_emptied_the_queue(agent):
    """A drainer took the last entries out of the queue and still holds the lease while it
    records them: a write right then waits for it instead of being refused."""
    gdir = agent / ".git" / "gasp"
    gdir.mkdir(exist_ok=True)
    drainer = subprocess.Popen([sys.executable, "-c", DRAINER, str(gdir), str(agent)],
                               stdout=subprocess.PIPE)
    try:
        assert drainer.stdout.readline() == b"ready\n"
        assert not queued(str(gdir))
        proc = gasp(agent, "record", "observation", "--summary", "noted meanwhile")
    finally:
        drainer.wait(10)
    assert proc.returncode == 0, out(proc)
    assert "noted meanwhile" in out(gasp(agent, "log"))
