"""A command right after a session sees every event: what the agent hooks queued (their
drainers not done yet) is recorded before any command but the hook's own reads the
state; `doctor`, which reports the queue, leaves it as it is."""

from __future__ import annotations

import json

from git_gasp.adapters.hook.queue_files import enqueue, queued
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
