"""``git gasp adapt claude-code|codex reconcile``: close the runs of sessions that ended
without SessionEnd, now rather than at the agent's next session.

Under ``hook.lock`` (so no hook records meanwhile) the hook queue is drained first;
then every open session of the agent (``<gitdir>/gasp/sessions/``) whose agent process
is not known to be running is closed — outcome ``abandoned``, or what was lifted
(``promoted`` / ``patched`` / ``completed``) when its transcript ends on a finished
turn — with its transcript archived and its boundary commit. A run the hooks started
whose progress file is gone is closed the same way.
"""

from __future__ import annotations

import os
import time

from git_gasp.adapters.agent_hook_queue import drain
from git_gasp.adapters.agent_hook_session import HookSession
from git_gasp.adapters.live import gasp_dir
from git_gasp.adapters.session_close import transcript_finished
from git_gasp.adapters.session_sweep import close_session, commit_closed, open_sessions
from git_gasp.adapters.session_writer import LIVE_RECORDERS
from git_gasp.base.errors import GaspError
from git_gasp.base.fileops import try_lock
from git_gasp.runtime.state import AgentState

LOCK_WAIT_S = 30.0


def _orphans(state: AgentState, agent: str, known: set[str]) -> list[dict]:
    """Open runs the hooks started for `agent` that no progress file accounts for."""
    found = []
    for node in state._unfinished_runs():
        meta = node["props"].get("metadata") or {}
        src = meta.get("source") if isinstance(meta, dict) else None
        if (isinstance(src, dict) and meta.get("recorded_by") in LIVE_RECORDERS
                and src.get("agent") == agent and isinstance(src.get("session_id"), str)
                and node["id"] not in known):
            found.append(node)
    return found


def reconcile(root: str | os.PathLike, agent: str) -> list[str]:
    """Close every open run of `agent`'s sessions that ended; return what was done."""
    root = os.fspath(root)
    gdir = gasp_dir(root)
    lock = os.path.join(gdir, "hook.lock")
    with try_lock(lock, LOCK_WAIT_S) as got:
        if not got:
            raise GaspError(f"{lock} is held (a hook is recording); try again")
        drain(root, gdir, time.monotonic() + 120)
        notes: list[str] = []
        with AgentState.open(root, "git-gasp-reconcile") as state:
            known = set()
            for path in open_sessions(gdir, agent):
                note = close_session(state, path, gdir, root, how="reconcile", force=True)
                if note:
                    notes.append(str(note))
                known.add(HookSession(state, agent, _sid(path, agent), gdir).run_id)
            for node in _orphans(state, agent, known):
                meta = node["props"]["metadata"]
                sess = HookSession(state, agent, meta["source"]["session_id"], gdir,
                                   transcript_path=meta.get("transcript_path"),
                                   recorded_by=meta["recorded_by"])
                sess.run_id, sess.closed = node["id"], False
                done = transcript_finished(agent, sess.transcript())
                closed = sess.close(root, how="reconcile", reason="no progress file",
                                    abandoned=not done)
                notes.append(str(commit_closed(state, root, sess, closed)))
        return notes


def _sid(path: str, agent: str) -> str:
    return os.path.basename(path)[len(agent) + 1:-len(".json")]
