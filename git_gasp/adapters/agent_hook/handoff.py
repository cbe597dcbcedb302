"""A pending hand-off: the run the next session of an agent continues (`git gasp resume`).

Why a file and not an environment variable: the agent hook only queues the payload's
bytes (``entry.py``: no environment is read or stored), and the drainer that records the
new run is often started by another process, so a variable set for the agent would not
reach it; with ``resume --print`` the person starts the agent themselves, in a shell
git-gasp never sees. So ``git gasp resume RUN --agent AGENT`` writes
``<gitdir>/gasp/handoff/<agent>.json`` (the git dir the agent's sessions are recorded
under, never committed): ``{"from_run", "agent", "created_ms", "expires_ms", "pid",
"start"}``; and the drainer, when it starts the first run of a new session of that agent
(``hook_session.HookSession.ensure_run``), takes it (`take`), so run.started records
``derived_from`` the old run, in the same write as the run itself.

Which session takes it: with ``pid`` (``resume`` started the agent itself, so the
process and its start time are known) only a session whose agent process is that one or
runs under it, and the hand-off is dropped once that process is gone; without (``resume
--print``) the first new session of that agent in this repository. Either way it is
taken once, under the queue's lock the drainer holds, and never after ``expires_ms``
(`TTL_MS` after it was written): a hand-off nobody took does not attach to a session
started days later. A second ``resume`` for the same agent replaces the first.
"""

from __future__ import annotations

import json
import os
import time

from git_gasp.adapters.agent_hook.agent_proc import MAX_DEPTH, proc_info
from git_gasp.base.fileops import remove_file
from git_gasp.base.files import atomic_write, read_text

TTL_MS = 30 * 60 * 1000  # a hand-off not taken within 30 minutes lapses
DIR = "handoff"


def handoff_path(gdir: str, agent: str) -> str:
    """Where the pending hand-off to `agent` waits: ``<gdir>/handoff/<agent>.json``."""
    return os.path.join(gdir, DIR, f"{agent}.json")


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def write(gdir: str, agent: str, from_run: str, *, pid: int | None = None,
          ttl_ms: int = TTL_MS) -> dict:
    """Leave a hand-off of `from_run` to the next session of `agent` (bound to the agent
    process `pid` when given); returns what was written."""
    now = _now_ms()
    info = proc_info(pid) if pid is not None else None
    doc = {"from_run": from_run, "agent": agent, "created_ms": now,
           "expires_ms": now + ttl_ms, "pid": pid, "start": info[2] if info else None}
    atomic_write(handoff_path(gdir, agent), json.dumps(doc, sort_keys=True).encode(),
                 root=os.path.dirname(gdir), make_parents=True, mode=0o600)
    return doc


def read(gdir: str, agent: str) -> dict | None:
    """The pending hand-off to `agent`, or None (none, unreadable, not one)."""
    try:
        doc = json.loads(read_text(handoff_path(gdir, agent)))
    except (OSError, ValueError):
        return None
    ok = isinstance(doc, dict) and isinstance(doc.get("from_run"), str) \
        and type(doc.get("expires_ms")) is int
    return doc if ok else None


def _runs_under(pid: int, start: object, agent_pid: int | None) -> bool | None:
    """Whether the process `pid` (started at `start`) is `agent_pid` or one of its
    ancestors: False when it is gone (or its pid was reused), None when /proc cannot
    say (another system)."""
    info = proc_info(pid)
    if info is None:
        return False if os.path.isdir("/proc/self") else None
    if start is not None and info[2] != start:
        return False  # the pid was reused by another process
    here = agent_pid
    for _ in range(MAX_DEPTH):
        if here is None or here <= 1:
            return None if agent_pid is None else False
        if here == pid:
            return True
        parent = proc_info(here)
        here = parent[1] if parent else None
    return False


def take(gdir: str, agent: str, agent_pid: int | None) -> str | None:
    """The run a new session of `agent` (its process `agent_pid`, when known) continues,
    the hand-off consumed; None when there is none for it (see the module doc)."""
    doc = read(gdir, agent)
    if doc is None:
        return None
    path = handoff_path(gdir, agent)
    if doc["expires_ms"] < _now_ms():
        remove_file(path)
        return None
    pid = doc.get("pid")
    if type(pid) is int:
        under = _runs_under(pid, doc.get("start"), agent_pid)
        if under is False and proc_info(pid) is None:
            remove_file(path)  # the process resume started is gone: nobody takes it now
            return None
        if under is False:
            return None  # another session of the agent: leave it for resume's own
    remove_file(path)
    return doc["from_run"]
