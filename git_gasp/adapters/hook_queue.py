"""The hook queue in ``<gitdir>/gasp/``: entries written whole, drained in order.

Each hook payload becomes one file in ``queue/`` holding the bytes the agent sent,
unchanged whatever their encoding (a lone surrogate escape, invalid UTF-8, a BOM), named
``<time_ns:020d>-<pid:08d>-<hex>.<agent>.payload`` (the agent ``--agent`` named, or
``detect``; under the git dir, mode 0600, never committed), before any heavy work, so a
hook killed at any later point loses nothing. Whoever holds ``hook.lock`` drains the
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

from git_gasp.adapters.hook_session import EVENTS, HookSession
from git_gasp.adapters.payloads import (
    AGENTS,
    HookEvent,
    decode_payload,
    parse_hook_payload,
    trim_payload,
)
from git_gasp.base.errors import GaspError
from git_gasp.base.files import (
    atomic_write,
    exists,
    fsync_dir,
    is_dir,
    move_into_place,
    open_output,
    open_regular,
    read_file,
)
from git_gasp.redact.redactor import Redactor

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

LEASE_WAIT_S = 8.0
LEASE_TTL_MS = 60_000  # a hook killed while holding the lease blocks others this long
LOG_MAX_BYTES = 1 << 20
ENTRY_MAX = 256 << 20  # a queue entry is read only as a regular file of at most this
ENTRY_SUFFIXES = (".payload", ".json")  # this git-gasp's entries, an older one's
WHY_SUFFIX = ".why"  # beside an entry set aside in queue/failed/: one line, why


def log(gdir: str | os.PathLike | None, message: str) -> None:
    """Append one line to ``adapter.log`` (rotated at LOG_MAX_BYTES); never raises."""
    if gdir is None:
        return
    try:
        path = os.path.join(gdir, "adapter.log")
        if exists(path) and os.stat(path).st_size > LOG_MAX_BYTES:
            move_into_place(path, os.path.join(gdir, "adapter.log.1"),
                            root=os.path.dirname(os.fspath(gdir)))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        line = f"{stamp} pid={os.getpid()} {message}".replace("\n", "\n    ") + "\n"
        with open_output(path, append=True) as fh:
            fh.write(line.encode("utf-8"))
    except Exception:  # noqa: BLE001 - the log never breaks the hook (OSError, UnsafePath)
        pass


def queue_dir(gdir: str) -> str:
    """Where queued hook payloads wait: ``<gitdir>/gasp/queue``."""
    return os.path.join(gdir, "queue")


def enqueue(gdir: str, agent: str | None, data: bytes) -> str:
    """Write the payload bytes `data`, unchanged, as one queue entry (whole or not at
    all, readable only by its owner: it may hold secrets until it is drained). Not
    fsynced yet: the hook that wrote it calls `keep` before it exits."""
    tag = agent if agent in AGENTS else "detect"
    name = f"{time.time_ns():020d}-{os.getpid():08d}-{os.urandom(4).hex()}.{tag}.payload"
    return atomic_write(os.path.join(queue_dir(gdir), name), data, root=os.path.dirname(gdir),
                        make_parents=True, mode=0o600, durable=False)


def keep(entry: str) -> None:
    """Make the queue entry `entry` durable (fsync it and the queue) when it is still
    queued: another hook was busy, the lease was held, or recording failed. An entry
    this hook recorded is gone by then, its events fsynced in the log, so the common
    case spends no fsync on it (a killed process loses nothing either way: only a power
    cut drops what the page cache holds). Never raises."""
    try:
        fd = open_regular(entry)
    except OSError:  # recorded and removed, or set aside: nothing left to keep
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
    fsync_dir(os.path.dirname(entry))


def queued(gdir: str) -> list[str]:
    """The queue's entries (paths), oldest first."""
    qdir = queue_dir(gdir)
    if not is_dir(qdir):
        return []
    return sorted(os.path.join(qdir, name) for name in os.listdir(qdir)
                  if name.endswith(ENTRY_SUFFIXES) and not name.startswith("."))


def entry_payload(name: str, data: bytes) -> tuple[str | None, Any]:
    """(agent or None to detect it, the payload's JSON) of the entry `name` holding
    `data`; GaspError when it is not JSON."""
    if name.endswith(".json"):  # {"agent", "payload"} from an older git-gasp
        item = decode_payload(data)
        if not isinstance(item, dict) or "payload" not in item:
            raise GaspError("queue entry is not an {agent, payload} record")
        agent = item.get("agent")
        return (agent if agent in AGENTS else None), item["payload"]
    tag = name.rsplit(".", 2)[-2] if name.count(".") >= 2 else ""
    return (tag if tag in AGENTS else None), decode_payload(data)


def _hold_lease(state: Any, deadline: float) -> bool:
    from git_gasp.store.lease import LeaseHeld

    while True:
        try:
            state.store.lease.ensure()
            state.refresh()
            return True
        except LeaseHeld:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)


def drain(root: str, gdir: str, deadline: float, said: list[str] | None = None) -> int:
    """Record every queued entry in order (the caller holds hook.lock); return how many.
    `said`, when given, gets what recording each entry did (the adapter log's line)."""
    from git_gasp.runtime import AgentState

    entries = queued(gdir)
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
                    log(gdir, f"time budget spent; {len(queued(gdir))} hook event(s) stay queued")
                    return done
                agent: str | None = None
                clean: Any = None
                understood = False
                name = os.path.basename(entry)
                try:
                    raw = read_file(entry, limit=ENTRY_MAX, root=os.path.dirname(gdir))
                    agent, payload = entry_payload(name, raw)
                    clean = Redactor().value(trim_payload(payload))
                    h = parse_hook_payload(clean, agent)
                    understood = True
                    what = process(state, h, gdir, root, name)
                    log(gdir, f"{h.agent} {h.session_id}: {what}")
                    if said is not None:
                        said.append(what)
                    os.unlink(entry)
                    done += 1
                except FileNotFoundError:
                    continue  # another drainer took it (should not happen under the lock)
                except Exception as exc:  # noqa: BLE001 - never block the queue on one entry
                    import traceback

                    bug = understood or not isinstance(exc, GaspError)
                    why = (f"recording it failed: {type(exc).__name__}: {exc}" if bug
                           else f"not understood: {exc}")
                    _set_aside(gdir, entry, agent, clean, why)
                    log(gdir, f"{name}: {why}; moved to queue/failed/"
                              + (f"\n{traceback.format_exc(limit=4)}" if bug else ""))
                    if understood:
                        state = _reopen(state, root)
            entries = queued(gdir)
        if done:
            state.save_end_state()  # the next hook folds only what comes after
    finally:
        state.close()
    return done


def _set_aside(gdir: str, entry: str, agent: str | None, clean: Any, why: str) -> None:
    """Move `entry` to ``queue/failed/`` with its ``.why`` line: redacted when it got that
    far (its bytes as they came only when they are not JSON a redactor can read)."""
    failed = os.path.join(queue_dir(gdir), "failed")
    name, top = os.path.basename(entry), os.path.dirname(gdir)
    try:
        os.makedirs(failed, exist_ok=True)
        line = " ".join(why.split())[:500] + "\n"
        atomic_write(os.path.join(failed, name + WHY_SUFFIX), line.encode("utf-8", "replace"),
                     root=top, mode=0o600)
        if clean is not None:
            doc = {"agent": agent, "payload": clean} if name.endswith(".json") else clean
            data = json.dumps(doc, ensure_ascii=False).encode("utf-8")
            atomic_write(os.path.join(failed, name), data, root=top, mode=0o600)
            os.unlink(entry)
        else:
            move_into_place(entry, os.path.join(failed, name), root=top)
    except OSError:
        pass


def _reopen(state: Any, root: str) -> Any:
    """A fresh AgentState after a failed entry (its in-memory state may be off)."""
    from git_gasp.runtime import AgentState

    worker = state.store.lease.worker_id
    fresh = AgentState.open(root, worker, lease_ttl_ms=LEASE_TTL_MS, end_state=True)
    return fresh


def process(state: Any, h: HookEvent, gdir: str, root: str,
            entry: str | None = None) -> str:
    """Record one hook event (queue entry `entry`); return a short description of what
    was done. Recording the same payload again adds nothing: every node id is stable,
    the keys of the last records are kept, and a closed run is not reopened by its own
    replayed payloads."""
    if h.event not in EVENTS:
        return f"{h.event}: not recorded"
    notes: list[str] = []
    if h.event in ("SessionStart", "Stop"):  # not on a tool call's path
        from git_gasp.adapters.session_sweep import sweep

        notes = sweep(state, gdir, root, h.agent, h.session_id)
    prefix = "".join(f"{n}; " for n in notes)
    sess = HookSession.for_event(state, h, gdir)
    if (sess.closed and sess.is_replay(h)) or (
            h.event == "SessionEnd" and state.graph.has_node(sess.run_id) and not sess.running()):
        return f"{prefix}{h.event}: {sess.run_id} is closed; nothing recorded"
    sess.note_process(entry)
    sess.ensure_run(h)
    sess.resume_pending()
    closed = None
    if h.event == "UserPromptSubmit":
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
        from git_gasp.adapters.session_sweep import commit_closed

        return f"{prefix}SessionEnd: {commit_closed(state, root, sess, closed)}"
    return f"{prefix}{h.event}: recorded in {sess.run_id}"
