"""The hook queue's drain: entries recorded in order, each mapped onto its session.

Each hook payload is one file in ``<gitdir>/gasp/queue/`` holding the bytes the agent
sent, unchanged whatever their encoding (a lone surrogate escape, invalid UTF-8, a BOM):
``hook/queue_files.py`` writes and lists them. Whoever holds ``hook.lock`` drains the
queue under the repo's lease, oldest first, re-listing until it is empty; each entry is
read as ``payloads.decode_payload`` reads bytes (invalid UTF-8 and lone surrogates as
U+FFFD, so the log stays valid UTF-8 JSON), cut to what can be stored
(``payloads.trim_payload``) and redacted (``redact/redactor.py``) as it is recorded, so
nothing unredacted leaves the queue. An entry that cannot be understood (not JSON, not
a hook payload, an event git-gasp does not record) or whose recording failed is set
aside in ``queue/failed/`` (redacted when it got that far, else its bytes as they came)
with a ``<entry>.why`` line saying why, which ``git gasp doctor`` reports: never
dropped, never blocking the rest. (``<time>-<pid>-<hex>.json`` entries, ``{"agent",
"payload"}`` from an older git-gasp, are drained too.) What happens is logged to
``adapter.log`` (see ``live.py``). `process` maps one entry's event onto its session
(``hook_session.py``), closing other sessions that ended unseen (``session_sweep.py``).
"""

from __future__ import annotations

import json
import os
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from git_gasp.adapters.agent_hook.queue_files import (
    WHY_SUFFIX,
    enqueue,
    entry_agent,
    failed_dir,
    keep,
    log,
    queued,
)
from git_gasp.adapters.agent_hook_session import EVENTS, HookSession
from git_gasp.adapters.dialects import models as hook_models
from git_gasp.adapters.payloads import (
    HookEvent,
    decode_payload,
    parse_hook_payload,
    trim_payload,
)
from git_gasp.adapters.session_sweep import BoundaryCommit, commit_closed, sweep
from git_gasp.base.agentnames import AGENTS
from git_gasp.base.errors import GaspError
from git_gasp.base.fileops import move_into_place
from git_gasp.base.files import atomic_write, read_file
from git_gasp.redact.redactor import Redactor
from git_gasp.runtime import AgentState
from git_gasp.store.lease import LeaseHeld

__all__ = ["ENTRY_MAX", "Drained", "Recorded", "drain", "enqueue", "entry_bytes", "keep", "log",
           "process", "queued", "redacted", "set_aside"]

LEASE_WAIT_S = 8.0
LEASE_TTL_MS = 60_000  # a hook killed while holding the lease blocks others this long
ENTRY_MAX = 256 << 20  # a queue entry is read only as a regular file of at most this


def entry_payload(name: str, data: bytes) -> tuple[str | None, Any]:
    """(agent or None to detect it, the payload's JSON) of the entry `name` holding
    `data`; GaspError when it is not JSON."""
    if name.endswith(".json"):  # {"agent", "payload"} from an older git-gasp
        item = decode_payload(data)
        if not isinstance(item, dict) or "payload" not in item:
            raise GaspError("queue entry is not an {agent, payload} record")
        agent = item.get("agent")
        return (agent if agent in AGENTS else None), item["payload"]
    return entry_agent(name), decode_payload(data)


def redacted(name: str, data: bytes) -> tuple[str | None, Any]:
    """(agent or None to detect it, the payload cut to what is stored and redacted) of
    the entry `name` holding `data`; GaspError when it is not JSON."""
    agent, payload = entry_payload(name, data)
    return agent, Redactor().value(trim_payload(payload))


def entry_bytes(name: str, agent: str | None, clean: Any) -> bytes:
    """What an entry `name` holds once its payload `clean` is redacted (an older
    git-gasp's ``.json`` entry keeps its ``{"agent", "payload"}`` form)."""
    doc = {"agent": agent, "payload": clean} if name.endswith(".json") else clean
    return json.dumps(doc, ensure_ascii=False).encode("utf-8")


@dataclass(frozen=True)
class Recorded:
    """What recording one entry did (`what`, for the adapter log) and the boundary
    commits it made, a failed one among them to be told to the person."""

    what: str
    commits: tuple[BoundaryCommit, ...] = ()

    def __str__(self) -> str:
        return self.what


@dataclass
class Drained:
    """What a drain did: how many entries it recorded, and the boundary commits that
    failed (recorded, not committed)."""

    recorded: int = 0
    not_committed: list[BoundaryCommit] = field(default_factory=list)


def _hold_lease(state: Any, deadline: float) -> bool:
    while True:
        try:
            state.store.lease.ensure()
            state.refresh()
            return True
        except LeaseHeld:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)


def drain(root: str | os.PathLike, gdir: str | os.PathLike, deadline: float,
          result: Drained | None = None, *, queue_gdir: str | os.PathLike | None = None) -> int:
    """Record every entry queued in `queue_gdir` (default `gdir`, the git dir of `root`
    whose ``gasp/`` holds the sessions and the log) in order, the caller holding the
    queue's lock; return how many. `result`, when given, adds up what was done."""
    root, gdir = os.fspath(root), os.fspath(gdir)
    qgdir = os.fspath(queue_gdir) if queue_gdir is not None else gdir
    entries = queued(qgdir)
    if not entries:
        return 0
    state = AgentState.open(root, f"git-gasp-hook-{os.getpid()}", lease_ttl_ms=LEASE_TTL_MS,
                            end_state=True)
    done = 0
    try:
        if not _hold_lease(state, min(deadline, time.monotonic() + LEASE_WAIT_S)):
            holder = state.store.lease.read()
            log(gdir, f"lease held by {holder.describe() if holder else 'another worker'}; "
                      f"{len(entries)} hook event(s) stay queued")
            return 0
        while entries:
            for entry in entries:
                if time.monotonic() >= deadline:
                    log(gdir, f"time budget spent; {len(queued(qgdir))} hook event(s) stay queued")
                    return done
                agent: str | None = None
                clean: Any = None
                understood = False
                name = os.path.basename(entry)
                try:
                    raw = read_file(entry, limit=ENTRY_MAX, root=os.path.dirname(qgdir))
                    agent, clean = redacted(name, raw)
                    h = parse_hook_payload(clean, agent)
                    understood = True
                    what = process(state, h, gdir, root, name)
                    log(gdir, f"{h.agent} {h.session_id}: {what}")
                    os.unlink(entry)
                    done += 1
                    if result is not None:
                        result.recorded += 1
                        result.not_committed += [c for c in what.commits if c.sha is None]
                except FileNotFoundError:
                    continue  # another drainer took it (should not happen under the lock)
                except Exception as exc:  # noqa: BLE001 - never block the queue on one entry
                    bug = understood or not isinstance(exc, GaspError)
                    why = (f"recording it failed: {type(exc).__name__}: {exc}" if bug
                           else f"not understood: {exc}")
                    set_aside(qgdir, entry, agent, clean, why)
                    log(gdir, f"{name}: {why}; moved to queue/failed/"
                              + (f"\n{traceback.format_exc(limit=4)}" if bug else ""))
                    if understood:
                        state = _reopen(state, root)
            entries = queued(qgdir)
        if done:
            state.save_end_state()  # the next hook folds only what comes after
    finally:
        state.close()
    return done


def set_aside(gdir: str, entry: str, agent: str | None, clean: Any, why: str) -> None:
    """Move `entry` to ``queue/failed/`` with its ``.why`` line: redacted when it got that
    far (its bytes as they came only when they are not JSON a redactor can read)."""
    failed = failed_dir(gdir)
    name, top = os.path.basename(entry), os.path.dirname(gdir)
    try:
        os.makedirs(failed, exist_ok=True)
        line = " ".join(why.split())[:500] + "\n"
        atomic_write(os.path.join(failed, name + WHY_SUFFIX), line.encode("utf-8", "replace"),
                     root=top, mode=0o600)
        if clean is not None:
            atomic_write(os.path.join(failed, name), entry_bytes(name, agent, clean),
                         root=top, mode=0o600)
            os.unlink(entry)
        else:
            move_into_place(entry, os.path.join(failed, name), root=top)
    except OSError:
        pass


def _reopen(state: Any, root: str) -> Any:
    """A fresh AgentState after a failed entry (its in-memory state may be off)."""
    worker = state.store.lease.worker_id
    fresh = AgentState.open(root, worker, lease_ttl_ms=LEASE_TTL_MS, end_state=True)
    return fresh


def process(state: Any, h: HookEvent, gdir: str | os.PathLike, root: str | os.PathLike,
            entry: str | None = None) -> Recorded:
    """Record one hook event (queue entry `entry`); return what was done. Recording the
    same payload again adds nothing: every node id is stable, the keys of the last
    records are kept, and a closed run is not reopened by its own
    replayed payloads."""
    gdir, root = os.fspath(gdir), os.fspath(root)
    if h.event not in EVENTS:
        return Recorded(f"{h.event}: not recorded")
    notes: list[str | BoundaryCommit] = []
    if h.event in ("SessionStart", "Stop"):  # not on a tool call's path
        notes = sweep(state, gdir, root, h.agent, h.session_id)
    prefix = "".join(f"{n}; " for n in notes)
    swept = tuple(n for n in notes if isinstance(n, BoundaryCommit))
    sess = HookSession.for_event(state, h, gdir)
    if (sess.closed and sess.is_replay(h)) or (
            h.event == "SessionEnd" and state.graph.has_node(sess.run_id) and not sess.running()):
        return Recorded(f"{prefix}{h.event}: {sess.run_id} is closed; nothing recorded", swept)
    sess.note_process(entry)
    sess.ensure_run(h)
    sess.resume_pending()
    closed = None
    model = None
    if h.event in ("ModelRequest", "ModelResponse"):
        model = hook_models.record(sess, h)
    elif h.event == "UserPromptSubmit":
        sess.prompt(h)
    elif h.event == "PreToolUse":
        sess.pre_tool(h)
    elif h.event in ("PostToolUse", "PostToolUseFailure"):
        sess.post_tool(h)
    elif h.event == "Stop":
        sess.stop(h)
    elif h.event == "SessionEnd":
        closed = sess.end(h, root)
    sess.pending = None
    sess.save()
    if closed is not None:
        done = commit_closed(state, root, sess, closed)
        return Recorded(f"{prefix}SessionEnd: {done}", (*swept, done))
    if model is not None:
        return Recorded(f"{prefix}{h.event}: {model} in {sess.run_id}", swept)
    return Recorded(f"{prefix}{h.event}: recorded in {sess.run_id}", swept)
