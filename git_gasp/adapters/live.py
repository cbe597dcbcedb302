"""Live hooks (rung 1): hook payloads queued by the agent hook → GASP events, in order.

The agent hook (``hook/entry.py``, ``git-gasp-hook AGENT``) only queues each payload's
bytes in ``<gitdir>/gasp/queue/`` and starts a drainer; this module drains. A drain
(`drain_pending`) runs in the detached drainer the hook starts (``hook/drain.py``; the
hook waits for it at ``SessionStart``, ``Stop`` and ``SessionEnd`` and reports a failed
boundary commit), before any other ``git gasp`` command (``cli/group.py``: a ``log`` or
``status`` right after a session sees every event), and in ``git gasp mcp`` before it
answers. It never raises:
whatever goes wrong is written to ``<gitdir>/gasp/adapter.log``, within a time budget
(``HOOK_BUDGET_S``, ``GASP_HOOK_BUDGET``).

How an event gets into the log without being lost or recorded twice:

1. the queue is the git dir's of the directory the hook was given, the payload's
   ``cwd`` or its own (``hook/queue_files.py``: entries written whole, 0600; a drain fsyncs
   what it leaves queued); the agent root the entries are recorded into is found from that
   same directory (`find_agent_root`: AGENT.md at or above it, or the state
   ``gasp.state`` names), its sessions and log in the root's git dir;
2. the drainer takes the queue's ``hook.lock`` (``flock``; a second drainer finds it
   held and leaves), opens the AgentState, waits for the repo's lease (up to
   ``LEASE_WAIT_S`` while another writer holds it) and records the queue oldest first,
   re-listing until it is empty; after letting go of the lock it looks once more, so an
   entry queued while it was finishing is not left for the next event;
3. each entry is read as valid text (``payloads.decode_payload``: invalid UTF-8 and
   lone surrogates as U+FFFD), cut to its stored size and **redacted**
   (``redact/redactor.py``, linear time) before anything is recorded, then removed;
   a drainer killed between recording and removing records it again, which adds
   nothing (stable ids, the last record keys kept, a closed run never reopened).

A drainer that cannot get the lease in time leaves the queue as it is: the next one
records it. An entry that cannot be understood (not JSON, not a hook payload, an event
not recorded) or fails for any other reason is set aside in ``queue/failed/`` with why
(logged, reported by ``git gasp doctor``) so it cannot block the rest. Entries queued
where no agent state is found are held, redacted and bounded, until there is one
(``hook/held.py``: ``git gasp init --branch`` records them).

Mapping (the same records and the same ids as the transcript importer, through
:class:`~git_gasp.adapters.session_writer.SessionWriter`; the run is
``run_<agent>.<session id>``, so importing the session's transcript later adds
nothing): SessionStart → ``run.started``; UserPromptSubmit → the first prompt's goal
(the run then ``serves`` it), later prompts tasks; PreToolUse → ``tool.called``;
PostToolUse / PostToolUseFailure → ``tool.finished`` + an observation; Stop → the
model turns not yet recorded, from the transcript or rollout
(``session_close.record_model_turns``), and an observation of the last assistant
message; SessionEnd → the last model turns,
``run.finished``, the
redacted transcript archived to ``transcripts/<run id>.jsonl.gz`` and the run's
boundary commit (followed by `git gasp sync` when the clone opted in:
``agent_hook_sync.py``). After each record the lifting rules, resumed from their saved state,
take that one record, and what they infer right after it (evals, failures, the patch
pinned to the commit, the decision) is recorded at once: work per hook is proportional
to what it adds. A run whose session ended unseen (no SessionEnd) is closed by the next
SessionStart or Stop of the agent, or by ``reconcile`` (``session_sweep.py``).

Per-session progress (the lifting rules' state, the last record keys, the agent
process) lives in ``<gitdir>/gasp/sessions/``, so separate hook processes resume the
open run. A
session whose run already finished (a resumed session) continues in
``run_<agent>.<session id>.2``, ``.3``….

Modules: ``agent_hook/entry.py`` is the hook; this one finds where to record and drains
(`drain_pending`; `run_hook` queues and drains in one process, for tests and benches);
``agent_hook/queue_files.py`` holds the queue's files, ``agent_hook_queue.py`` the drain
under the lock and the mapping of one event, ``agent_hook_session.py`` the per-session
progress.
"""

from __future__ import annotations

import os
import time
import traceback

from git_gasp.adapters.agent_hook.entry import payload_cwd
from git_gasp.adapters.agent_hook.held import hold, release
from git_gasp.adapters.agent_hook.queue_files import (
    LOCK_NAME,
    enqueue,
    held,
    keep,
    lock_held,
    log,
    queued,
)
from git_gasp.adapters.agent_hook_queue import Drained, drain
from git_gasp.adapters.agent_hook_sync import run_requested
from git_gasp.base.fileops import try_lock
from git_gasp.base.gitdir import find_git_dir
from git_gasp.store.location import find_root

HOOK_BUDGET_S = 20.0  # a whole drain, lock and lease waits included
LOCK_WAIT_S = 10.0  # a command waits this long for a drainer at work to finish


def find_agent_root(start: str | os.PathLike | None) -> str | None:
    """The agent root for a session in `start`: AGENT.md at or above it (up to the work
    tree's top), else the state directory its repository's config names
    (`store.location`); None when neither exists."""
    if not start:
        return None
    try:
        found = find_root(os.path.realpath(start))
    except (OSError, ValueError):  # a path with NUL or a lone surrogate names no repo
        return None
    return str(found) if found is not None else None


def gasp_dir(root: str | os.PathLike) -> str:
    """``<gitdir>/gasp`` of the repo at `root` (``<root>/.git/gasp`` when there is none)."""
    gitdir = find_git_dir(root) or os.path.join(root, ".git")
    out = os.path.join(gitdir, "gasp")
    os.makedirs(out, exist_ok=True)
    return out


def budget() -> float:
    """A drain's time budget in seconds (``GASP_HOOK_BUDGET``, else HOOK_BUDGET_S)."""
    try:
        return float(os.environ.get("GASP_HOOK_BUDGET") or HOOK_BUDGET_S)
    except ValueError:
        return HOOK_BUDGET_S


def drain_pending(start: str | os.PathLike, *, lock_wait_s: float = 0.0,
                  budget_s: float | None = None) -> Drained:
    """Record what the hooks queued in the git dir of `start` into the agent root found
    from `start`, unless another process holds the queue's lock for longer than
    `lock_wait_s` (it drains then). Never raises: problems go to the adapter log."""
    result = Drained()
    gitdir = find_git_dir(start)
    if gitdir is None:
        return result
    qgdir = os.path.join(gitdir, "gasp")
    if not queued(qgdir) and not held(qgdir):
        if lock_wait_s > 0 and lock_held(qgdir):
            # a drainer took the last entries and is still recording them (it holds the
            # lease): wait for it to finish, so that the caller's write finds the lease free
            with try_lock(os.path.join(qgdir, LOCK_NAME), lock_wait_s):
                pass
        return result
    deadline = time.monotonic() + (budget() if budget_s is None else budget_s)
    try:
        root = find_agent_root(start)
        while True:
            with try_lock(os.path.join(qgdir, LOCK_NAME), lock_wait_s) as got:
                if not got:
                    return result  # the holder drains, and looks again as it lets go
                if root is None:
                    hold(qgdir, start)
                    return result
                release(qgdir)
                before = result.recorded
                gdir = gasp_dir(root)
                try:
                    drain(root, gdir, deadline, result, queue_gdir=qgdir)
                finally:
                    keep(*queued(qgdir))  # what stays queued (the lease held…) is durable
                synced = run_requested(root, gdir, deadline)  # the lease is free again
                if synced is not None:
                    log(gdir, synced)
            if (not queued(qgdir) or result.recorded == before
                    or time.monotonic() >= deadline):
                return result
            lock_wait_s = 0.0  # queued while this drain finished: drain it, unless taken
    except Exception as exc:  # noqa: BLE001 - a drain never breaks the hook or the command
        log(qgdir, f"error: {type(exc).__name__}: {exc}\n{traceback.format_exc(limit=6)}")
        return result


def run_hook(data: bytes, *, agent: str | None = None, repo: str | None = None,
             budget_s: float | None = None) -> str:
    """Queue the payload `data` and drain the queue in this process (what a drainer
    does, without starting one: tests, benches); never raises. Returns what happened."""
    start = repo or payload_cwd(data) or os.getcwd()
    gitdir = find_git_dir(start)
    if gitdir is None or find_agent_root(start) is None:
        return "no agent repo (AGENT.md) at or above the session's directory; ignored"
    qgdir = os.path.join(gitdir, "gasp")
    if not data.strip():
        log(qgdir, "empty hook payload; nothing to record")
        return "empty payload"
    entry = enqueue(qgdir, agent, data)
    try:
        result = drain_pending(start, lock_wait_s=min(LOCK_WAIT_S, budget_s or LOCK_WAIT_S),
                               budget_s=budget_s)
    finally:
        keep(entry)  # still queued (busy, the lease held, a failure): durable now
    if not result.recorded and os.path.exists(entry):
        return "queued"
    return f"recorded {result.recorded} event(s)" + "".join(
        f"; {c}" for c in result.not_committed)
