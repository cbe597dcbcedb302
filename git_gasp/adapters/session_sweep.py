"""Closing the runs of sessions that ended without SessionEnd (Codex sends none; a
killed Claude Code skips it).

`sweep` runs on every SessionStart and Stop hook: each other open session of the same
agent in this repo (``<gitdir>/gasp/sessions/<agent>.*.json``) whose agent process is
gone — or, where that cannot be checked, that has been quiet for ``STALE_MS``
(``GASP_SESSION_STALE_S``) — is closed by `close_session`: its pending record
written, its transcript archived, ``run.finished`` with outcome ``abandoned`` (or
what was lifted, when the transcript ends on a finished turn) and its boundary commit.
``reconcile.py`` closes them on demand (`close_session` with ``force``).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from git_gasp.adapters.agent_hook_session import HookSession
from git_gasp.adapters.agent_hook_sync import request
from git_gasp.adapters.session_close import alive, transcript_finished
from git_gasp.adapters.session_writer import run_id_for
from git_gasp.base.files import atomic_write, read_text
from git_gasp.runtime import commit_run
from git_gasp.runtime.commit import CommitError
from git_gasp.runtime.state import AgentState

STALE_MS = 6 * 3600 * 1000  # a session whose agent cannot be checked: ended when this quiet


def stale_ms() -> int:
    """How long a session whose agent cannot be checked stays open while quiet (ms)."""
    env = os.environ.get("GASP_SESSION_STALE_S")
    try:
        return int(float(env) * 1000) if env else STALE_MS
    except ValueError:
        return STALE_MS


@dataclass(frozen=True)
class BoundaryCommit:
    """What a closed run's boundary commit did: committed (`sha`), or not (`failure`
    says why: the run's events are in the log, `git gasp doctor` says how to commit
    them)."""

    run_id: str
    outcome: str
    sha: str | None = None
    failure: str | None = None
    sync_requested: bool = False

    def __str__(self) -> str:
        if self.sha is None:
            return f"{self.run_id} finished ({self.outcome}), not committed: {self.failure}"
        then = "; sync requested" if self.sync_requested else ""
        return f"{self.run_id} finished ({self.outcome}), committed {self.sha[:12]}{then}"


def commit_closed(state: AgentState, root: str, sess: HookSession,
                  closed: tuple[str, str, list[str]]) -> BoundaryCommit:
    """The boundary commit of a run `sess` closed: what was done."""
    run_id, outcome, paths = closed
    try:  # the guard's rules apply to this commit too (runtime.commit)
        sha = commit_run(root, run_id, sess.goal, outcome, paths, log_rel=state.store.rel)
    except CommitError as exc:  # recorded, not committed: say why in the hook log
        note_failed_commit(sess.gdir, run_id, outcome, str(exc))
        return BoundaryCommit(run_id, outcome, failure=str(exc))
    sha = sha.decode() if isinstance(sha, bytes) else str(sha)
    return BoundaryCommit(run_id, outcome, sha, sync_requested=request(root))


FAILED_COMMITS = "commit-failed.json"  # under <gitdir>/gasp: what doctor reports
FAILED_KEPT = 20


def failed_commits(gdir: str, since_ms: int = 0) -> list[BoundaryCommit]:
    """The boundary commits that failed at or after `since_ms` (as `note_failed_commit`
    remembered them: whichever drainer made them)."""
    try:
        kept = json.loads(read_text(os.path.join(gdir, FAILED_COMMITS)))
    except (OSError, ValueError):
        return []
    return [BoundaryCommit(f["run_id"], str(f.get("outcome")), failure=str(f.get("reason")))
            for f in kept if isinstance(kept, list) and isinstance(f, dict)
            and isinstance(f.get("run_id"), str) and isinstance(f.get("ts_ms"), int)
            and f["ts_ms"] >= since_ms]


def note_failed_commit(gdir: str, run_id: str, outcome: str, reason: str) -> None:
    """Remember that run `run_id`'s boundary commit failed (`doctor.agent_state`
    reports it until a commit with its Run-Id trailer is on the branch). Never raises."""
    path = os.path.join(gdir, FAILED_COMMITS)
    try:
        old = json.loads(read_text(path)) if Path(path).exists() else []
    except (OSError, ValueError):
        old = []
    kept = [f for f in old if isinstance(f, dict) and f.get("run_id") != run_id]
    kept.append({"run_id": run_id, "outcome": outcome, "reason": " ".join(reason.split()),
                 "ts_ms": int(time.time() * 1000)})
    try:
        atomic_write(path, json.dumps(kept[-FAILED_KEPT:]).encode() + b"\n",
                     root=os.path.dirname(gdir), mode=0o600)
    except Exception:  # noqa: BLE001 - a hook never breaks the agent (OSError, UnsafePath)
        pass


def open_sessions(gdir: str, agent: str) -> list[str]:
    """Progress files of `agent`'s sessions whose run is open, oldest name first."""
    sdir = os.path.join(gdir, "sessions")
    if not Path(sdir).is_dir():
        return []
    prefix = f"{agent}."  # the names `glob(f"{agent}.*.json")` matches
    return sorted(os.path.join(sdir, name) for name in os.listdir(sdir)
                  if name.startswith(prefix) and name.endswith(".json")
                  and len(name) >= len(prefix) + len(".json"))


def close_session(state: AgentState, path: str, gdir: str, root: str, *, how: str,
                  force: bool = False) -> str | BoundaryCommit | None:
    """Close the open run of the session whose progress is `path` if its agent is gone
    (or `force`, unless it is known to run); return what was done (None: nothing)."""
    try:
        side = json.loads(read_text(path))
    except (OSError, ValueError):
        return None
    name = os.path.basename(path)
    agent = side.get("agent") or name.split(".", 1)[0]
    sid = side.get("session_id") or name[len(agent) + 1:-len(".json")]
    sess = HookSession(state, agent, sid, gdir)
    if sess.closed:
        return None
    if not sess.running():  # finished elsewhere (`run finish`, an import): file it away
        sess.closed = True
        sess.save()
        return None
    live = alive(sess.proc)
    if live:
        return None if not force else f"{sess.run_id}: its agent still runs; left open"
    quiet = int(time.time() * 1000) - sess.last_ms
    if live is None and not force and quiet < stale_ms():
        return None  # cannot tell whether it runs, and it was active lately
    sess.make_current()
    sess.resume_pending()
    done = transcript_finished(agent, sess.transcript())
    closed = sess.close(root, how=how, reason="agent gone without SessionEnd",
                        abandoned=not done)
    return commit_closed(state, root, sess, closed)


def sweep(state: AgentState, gdir: str, root: str, agent: str,
          current: str) -> list[str | BoundaryCommit]:
    """Close the runs of `agent`'s other sessions that ended without SessionEnd."""
    notes: list[str | BoundaryCommit] = []
    own = f"{run_id_for(agent, current)[len('run_'):]}.json"
    for path in open_sessions(gdir, agent):
        if os.path.basename(path) == own:
            continue
        try:
            note = close_session(state, path, gdir, root, how="next-session")
        except Exception as exc:  # noqa: BLE001 - never lose the event that swept
            state.run = None
            note = f"{os.path.basename(path)}: not closed ({type(exc).__name__}: {exc})"
        if note:
            notes.append(note)
    return notes
