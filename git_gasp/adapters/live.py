"""Live hooks (rung 1): one hook payload on stdin → GASP events, one event at a time.

``git gasp adapt hook`` runs once per hook invocation of Claude Code or Codex. It must
never break the agent, so :func:`run_hook` never raises: whatever goes wrong is
written to ``<gitdir>/gasp/adapter.log`` and the process exits 0, within the hook's
time budget (``HOOK_BUDGET_S``; the installed hook entries give the agent a larger
timeout).

How an event gets into the log without being lost:

1. the payload's bytes are queued **unchanged**, whatever their encoding, as one file in
   ``<gitdir>/gasp/queue/`` (tmp + rename, so a queued entry is always whole; mode
   0600; the git dir is never committed) before any heavy work: a hook killed after
   this loses nothing, the next hook records the entry. The entry is fsynced (with the
   queue) only if it is still queued when the hook exits (`hook_queue.keep`): one it
   recorded is gone, its events fsynced in the log. Only the repo is found first:
   ``--repo``, else the payload's ``cwd`` as far as a read that never fails can tell
   it (`peek_cwd`), else the hook's own directory;
2. entries are read as valid text (``payloads.decode_payload``: invalid UTF-8 and lone
   surrogates as U+FFFD), cut to their stored size and **redacted**
   (``redact/redactor.py``, linear time) as they are drained, before anything is
   recorded;
3. the process takes ``<gitdir>/gasp/hook.lock`` (``flock``; hooks that run in
   parallel wait for each other, up to ``LOCK_WAIT_S``), opens the AgentState, waits
   for the repo's lease (retrying up to ``LEASE_WAIT_S`` while another writer holds
   it) and drains the whole queue in arrival order, re-listing until it is empty.

A hook that cannot get the lock or the lease in time leaves its entry queued: the
process holding the lock, or the next hook, records it. An entry that cannot be
understood (not JSON, not a hook payload, an event not recorded) or fails for any other
reason is set aside in ``queue/failed/`` with why (logged, reported by ``git gasp
doctor``) so it cannot block the rest.

Mapping (the same records and the same ids as the transcript importer, through
:class:`~git_gasp.adapters.session_writer.SessionWriter`; the run is
``run_<agent>.<session id>``, so importing the session's transcript later adds
nothing): SessionStart → ``run.started``; UserPromptSubmit → the first prompt's goal
(the run then ``serves`` it), later prompts tasks; PreToolUse → ``tool.called``;
PostToolUse / PostToolUseFailure → ``tool.finished`` + an observation; Stop → an
observation of the last assistant message; SessionEnd → ``run.finished``, the
redacted transcript archived to ``transcripts/<run id>.jsonl.gz`` and the run's
boundary commit (followed by `git gasp sync` when the clone opted in:
``sync_hook.py``). After each record the lifting rules, resumed from their saved state,
take that one record, and what they infer right after it (evals, failures, the patch
pinned to the commit, the decision) is recorded at once: work per hook is proportional
to what it adds. A run whose session ended unseen (no SessionEnd) is closed by the next
SessionStart or Stop of the agent, or by ``reconcile`` (``session_sweep.py``).

Per-session progress (the lifting rules' state, the last record keys, the agent
process) lives in ``<gitdir>/gasp/sessions/``, so separate hook processes resume the
open run. A
session whose run already finished (a resumed session) continues in
``run_<agent>.<session id>.2``, ``.3``….

Modules: this one is the entry point (`run_hook`); ``hook_queue.py`` holds the queue,
its drain, the log and the mapping of one event; ``hook_session.py`` the per-session
progress.
"""

from __future__ import annotations

import json
import os
import time

from git_gasp.adapters.hook_queue import drain, enqueue, keep, log
from git_gasp.adapters.sync_hook import run_requested
from git_gasp.base import git
from git_gasp.base.errors import GaspError
from git_gasp.base.files import path_str, try_lock

HOOK_BUDGET_S = 20.0  # the whole hook, lock and lease waits included
LOCK_WAIT_S = 10.0


def find_agent_root(start: str | os.PathLike | None) -> str | None:
    """The agent root for a session in `start`: AGENT.md at or above it (up to the work
    tree's top), else the state directory its repository's config names
    (`store.location`); None when neither exists. A str: the hook never imports
    pathlib."""
    from git_gasp.store.location import find_root

    if not start:
        return None
    try:
        found = find_root(os.path.realpath(start))
    except (OSError, ValueError):  # a path with NUL or a lone surrogate names no repo
        return None
    return path_str(found) if found is not None else None


def peek_cwd(data: bytes) -> str | None:
    """The payload's ``cwd``, to find the repo before it is queued; None when the bytes
    do not tell (never raises: whatever they hold, they are queued as they are)."""
    try:
        payload = json.loads(data)
    except Exception:  # noqa: BLE001 - invalid UTF-8, not JSON, too deep: try as text
        try:
            payload = json.loads(data.decode("utf-8", "replace"), strict=False)
        except Exception:  # noqa: BLE001
            return None
    cwd = payload.get("cwd") if isinstance(payload, dict) else None
    return cwd if isinstance(cwd, str) else None


def gasp_dir(root: str | os.PathLike) -> str:
    """``<gitdir>/gasp`` of the repo at `root` (``<root>/.git/gasp`` if git cannot say)."""
    gitdir = git.find_git_dir_str(root)  # read from .git, without starting git
    if gitdir is None:
        try:
            gitdir = git.git_dir_str(root)
        except (GaspError, OSError):
            gitdir = os.path.join(root, ".git")
    out = os.path.join(gitdir, "gasp")
    os.makedirs(out, exist_ok=True)
    return out


def run_hook(data: bytes, *, agent: str | None = None, repo: str | None = None,
             budget_s: float | None = None) -> str:
    """Handle one hook invocation; never raises. Returns what happened (for tests/logs)."""
    start = time.monotonic()
    budget = budget_s if budget_s is not None else float(
        os.environ.get("GASP_HOOK_BUDGET") or HOOK_BUDGET_S)
    deadline = start + budget
    gdir = None
    try:
        root = find_agent_root(repo) if repo else (find_agent_root(peek_cwd(data))
                                                   or find_agent_root(os.getcwd()))
        if root is None:
            return "no agent repo (AGENT.md) at or above the session's directory; ignored"
        gdir = gasp_dir(root)
        if not data.strip():
            log(gdir, "empty hook payload; nothing to record")
            return "empty payload"
        entry = enqueue(gdir, agent, data)
        try:
            wait = min(LOCK_WAIT_S, max(0.0, deadline - time.monotonic()))
            with try_lock(os.path.join(gdir, "hook.lock"), wait) as got:
                if not got:
                    log(gdir, f"{os.path.basename(entry)}: another hook is busy; queued")
                    return "queued"
                said: list[str] = []
                n = drain(root, gdir, deadline, said)
                synced = run_requested(root, gdir, deadline)  # the lease is free again
                if synced is not None:
                    log(gdir, synced)
        finally:
            keep(entry)  # still queued (busy, the lease held, a failure): durable now
        failed = [w for w in said if ", not committed: " in w]  # a SessionEnd's commit
        return f"recorded {n} event(s)" + "".join(f"; {w}" for w in failed)
    except Exception as exc:  # noqa: BLE001 - a hook never breaks the agent
        import traceback

        log(gdir, f"error: {type(exc).__name__}: {exc}\n{traceback.format_exc(limit=6)}")
        return f"error: {exc}"
