"""Live hooks (rung 1): one hook payload on stdin → GASP events, one event at a time.

``git gasp adapt hook`` runs once per hook invocation of Claude Code or Codex. It must
never break the agent, so :func:`run_hook` never raises: whatever goes wrong is
written to ``<gitdir>/gasp/adapter.log`` and the process exits 0, within the hook's
time budget (``HOOK_BUDGET_S``; the installed hook entries give the agent a larger
timeout).

How an event gets into the log without being lost:

1. the payload is parsed and **redacted** (``redact.py``) before anything is written;
2. it is queued as one file in ``<gitdir>/gasp/queue/`` (tmp + rename, so a queued
   entry is always whole);
3. the process takes ``<gitdir>/gasp/hook.lock`` (``flock``; hooks that run in
   parallel wait for each other, up to ``LOCK_WAIT_S``), opens the AgentState, waits
   for the repo's lease (retrying up to ``LEASE_WAIT_S`` while another writer holds
   it) and drains the whole queue in arrival order, re-listing until it is empty.

A hook that cannot get the lock or the lease in time leaves its entry queued: the
process holding the lock, or the next hook, records it. An entry that fails for any
other reason moves to ``queue/failed/`` (logged) so it cannot block the rest.

Mapping (the same records and the same ids as the transcript importer, through
:class:`~git_gasp.adapters.project.SessionWriter`; the run is
``run_<agent>.<session id>``, so importing the session's transcript later adds
nothing): SessionStart → ``run.started``; UserPromptSubmit → the first prompt's goal
(the run then ``serves`` it), later prompts tasks; PreToolUse → ``tool.called``;
PostToolUse / PostToolUseFailure → ``tool.finished`` + an observation; Stop → an
observation of the last assistant message; SessionEnd → ``run.finished``, the
redacted transcript archived to ``transcripts/<run id>.jsonl.gz`` and the run's
boundary commit. After each record the lifting rules run over the session so far and
what they infer right after that record (evals, failures, the patch pinned to the
commit, the decision) is recorded at once.

Per-session progress (the records so far and which node recorded each) lives in
``<gitdir>/gasp/sessions/``, so separate hook processes resume the open run. A
session whose run already finished (a resumed session) continues in
``run_<agent>.<session id>.2``, ``.3``….
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import subprocess
import time
import traceback
from pathlib import Path
from typing import Any

from git_gasp.adapters.lifting import lift
from git_gasp.adapters.payloads import HookEvent, parse_hook_payload
from git_gasp.adapters.project import SessionWriter, outcome_of, redacted_archive, run_id_for
from git_gasp.adapters.records import TOOL_RESULT, TOOL_USE, USER_PROMPT, Record
from git_gasp.adapters.redact import Redactor

HOOK_BUDGET_S = 20.0  # the whole hook, lock and lease waits included
LOCK_WAIT_S = 10.0
LEASE_WAIT_S = 8.0
LEASE_TTL_MS = 60_000  # a hook killed while holding the lease blocks others this long
LOG_MAX_BYTES = 1 << 20
KEEP_HEAD, KEEP_TAIL = 1000, 3000  # of a tool output kept for the lifting rules


def find_agent_root(start: str | os.PathLike | None) -> Path | None:
    """The nearest directory at or above `start` holding AGENT.md."""
    if not start:
        return None
    try:
        path = Path(start).resolve()
    except OSError:
        return None
    for candidate in (path, *path.parents):
        if (candidate / "AGENT.md").is_file():
            return candidate
    return None


def gasp_dir(root: Path) -> Path:
    """``<gitdir>/gasp`` of the repo at `root` (``<root>/.git/gasp`` if git cannot say)."""
    try:
        proc = subprocess.run(["git", "rev-parse", "--absolute-git-dir"], cwd=root,
                              capture_output=True, text=True, timeout=10, check=False,
                              stdin=subprocess.DEVNULL)
        gitdir = Path(proc.stdout.strip()) if proc.returncode == 0 else root / ".git"
    except (OSError, subprocess.SubprocessError):
        gitdir = root / ".git"
    out = gitdir / "gasp"
    out.mkdir(parents=True, exist_ok=True)
    return out


def log(gdir: Path | None, message: str) -> None:
    """Append one line to ``adapter.log`` (rotated at LOG_MAX_BYTES); never raises."""
    if gdir is None:
        return
    try:
        path = gdir / "adapter.log"
        if path.exists() and path.stat().st_size > LOG_MAX_BYTES:
            os.replace(path, gdir / "adapter.log.1")
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        line = f"{stamp} pid={os.getpid()} {message}".replace("\n", "\n    ") + "\n"
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(line)
    except OSError:
        pass


# --- the queue --------------------------------------------------------------------------


def queue_dir(gdir: Path) -> Path:
    return gdir / "queue"


def enqueue(gdir: Path, agent: str, payload: dict) -> Path:
    """Write one redacted payload as a queue entry (whole or not at all)."""
    qdir = queue_dir(gdir)
    qdir.mkdir(parents=True, exist_ok=True)
    name = f"{time.time_ns():020d}-{os.getpid():08d}-{os.urandom(4).hex()}.json"
    tmp = qdir / f".{name}.tmp"
    tmp.write_text(json.dumps({"agent": agent, "payload": payload}, ensure_ascii=False),
                   encoding="utf-8")
    os.replace(tmp, qdir / name)
    return qdir / name


def queued(gdir: Path) -> list[Path]:
    qdir = queue_dir(gdir)
    if not qdir.is_dir():
        return []
    return sorted(p for p in qdir.iterdir() if p.suffix == ".json" and not p.name.startswith("."))


@contextlib.contextmanager
def hook_lock(gdir: Path, wait_s: float):
    """Hold ``hook.lock`` (flock); yields False when it could not be had in `wait_s`."""
    import fcntl

    fd = os.open(gdir / "hook.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                if time.monotonic() >= deadline:
                    yield False
                    return
                time.sleep(0.02)
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


# --- per-session progress -----------------------------------------------------------------


def _clip(value: Any, limit: int = 2000) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + "…"
    if isinstance(value, dict):
        return {k: _clip(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [_clip(v, limit) for v in value[:100]]
    return value


def _keep_output(text: str) -> str:
    if len(text) <= KEEP_HEAD + KEEP_TAIL:
        return text
    return text[:KEEP_HEAD] + "\n…\n" + text[-KEEP_TAIL:]


class HookSession(SessionWriter):
    """One agent session as seen through its hooks, resumed from its sidecar file."""

    def __init__(self, state: Any, h: HookEvent, gdir: Path) -> None:
        base = run_id_for(h.agent, h.session_id)
        safe = base[len("run_"):]
        self.path = gdir / "sessions" / f"{safe}.json"
        side = self._load()
        super().__init__(state, h.agent, h.session_id, side.get("run_id") or base,
                         cwd=h.cwd or side.get("cwd"))
        self.base = base
        self.records = [Record(**r) for r in side.get("records", [])]
        self.node_of = dict(side.get("node_of", {}))
        self.event_of = dict(side.get("event_of", {}))
        self.emitted: set[str] = set(side.get("emitted", []))
        self.goal: str | None = side.get("goal")
        self.prompts: int = int(side.get("prompts", 0))
        self.transcript_path = h.transcript_path or side.get("transcript_path")

    def _load(self) -> dict:
        try:
            side = json.loads(self.path.read_text(encoding="utf-8"))
            return side if isinstance(side, dict) else {}
        except (OSError, ValueError):
            return {}

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {"run_id": self.run_id, "cwd": self.cwd, "transcript_path": self.transcript_path,
                "goal": self.goal, "prompts": self.prompts, "emitted": sorted(self.emitted),
                "node_of": self.node_of, "event_of": self.event_of,
                "records": [{"kind": r.kind, "key": r.key, "parent": r.parent,
                             "ts_ms": r.ts_ms, "data": r.data, "line": r.line}
                            for r in self.records]}
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, self.path)

    # --- the run ---------------------------------------------------------------------
    def _reset(self, run_id: str) -> None:
        self.run_id = run_id
        self.records, self.node_of, self.event_of, self.emitted = [], {}, {}, set()
        self.goal, self.prompts = None, 0

    def ensure_run(self, h: HookEvent) -> None:
        """Make this session's run the state's open run, starting (or continuing) it."""
        from git_gasp.runtime.state import OpenRun

        st = self.state
        graph = st.graph
        node = graph.node(self.run_id)
        if node is not None and node["props"].get("status") != "running":
            n = 2  # the run finished (a resumed session): continue in a new run
            while (later := graph.node(f"{self.base}.{n}")) is not None and later[
                    "props"].get("status") != "running":
                n += 1
            self._reset(f"{self.base}.{n}")
            node = graph.node(self.run_id)
        if node is not None:
            if st.run is None or st.run.run_id != self.run_id:
                # Another session's run is open: switch to ours (AgentState keeps one
                # open run; the other resumes the same way when its hooks arrive).
                props = node["props"]
                started = props.get("started_event") or st.creator_of(self.run_id)
                st.run = OpenRun(self.run_id, started, props.get("goal_id"),
                                 props.get("task_id"))
            return
        st.run = None  # leave any other open run running; ours becomes the open one
        st.start_run(f"{h.agent} session {h.session_id}", run_id=self.run_id,
                     metadata=self._src(None, cwd=self.cwd, model=h.model,
                                        transcript_path=self.transcript_path,
                                        recorded_by="hooks", start_source=h.reason))

    # --- records ---------------------------------------------------------------------
    def _known(self, key: str) -> bool:
        return any(r.key == key for r in self.records)

    def _add(self, rec: Record) -> None:
        self.records.append(rec)
        if rec.kind == TOOL_USE:
            self.tool_called(rec, None)  # nothing when recorded already (a replayed entry)
        elif rec.kind == TOOL_RESULT:
            self.tool_finished(rec, None)
        for item in lift(self.records):
            if item.after != rec.key or item.key in self.emitted:
                continue
            if item.kind == "goal":
                self._goal(item)
            else:
                self.lifted(item, rec.key, self.goal)
            self.emitted.add(item.key)
        self.save()  # this record is done: a crash from here on does not replay it

    def _goal(self, item: Any) -> None:
        """goal.created whose ops pair also links the open run to it (run serves goal)."""
        from git_gasp.runtime.state import create_node, relate, update_node

        st = self.state
        gid = self.stable_id("goal", item.key)
        if st.graph.has_node(gid):  # recorded already (a replayed hook entry)
            if st.creator_of(gid):
                self.event_of[item.after] = st.creator_of(gid)
            self.node_of[item.key] = self.goal = gid
            if st.run is not None:
                st.run.goal_id = gid
            return
        title, summary = self.r.text(item.data["title"]), self.r.text(item.data["summary"])
        meta = self._src(item.after, **item.metadata)
        payload = {"id": gid, "title": title, "summary": summary, "status": "Open",
                   "owner": {"kind": st.actor[0], "id": st.actor[1]}, "metadata": meta}
        props = {"title": title, "summary": summary or None, "status": "Open", "metadata": meta}
        ops = [create_node(gid, "goal", {k: v for k, v in props.items() if v is not None}),
               relate(self.run_id, "serves", gid), update_node(self.run_id, {"goal_id": gid})]
        self.event_of[item.after] = self._emit("goal.created", payload, ops, None)
        self.node_of[item.key] = gid
        self.goal = gid
        if st.run is not None:
            st.run.goal_id = gid

    def prompt(self, h: HookEvent, entry: str | None = None) -> None:
        if entry and any(r.kind == USER_PROMPT and r.data.get("entry") == entry
                         for r in self.records):
            return  # this queue entry's prompt is recorded already (a replayed entry)
        key = f"prompt:{self.prompts + 1}"
        self.prompts += 1
        data = {"text": h.prompt or ""} | ({"entry": entry} if entry else {})
        self._add(Record(USER_PROMPT, key, None, None, data))

    def _use_record(self, h: HookEvent) -> Record:
        key = h.tool_use_id or f"tool:{len(self.records)}"
        return Record(TOOL_USE, key, None, None, {
            "tool_use_id": key, "name": h.tool_name or "unknown",
            "input": _clip(h.tool_input if h.tool_input is not None else {}),
            "message_id": None})

    def pre_tool(self, h: HookEvent) -> None:
        rec = self._use_record(h)
        if not self._known(rec.key):
            self._add(rec)

    def post_tool(self, h: HookEvent) -> None:
        use = self._use_record(h)
        if not self._known(use.key):
            self._add(use)  # PreToolUse was missed: record the call now
        key = f"result:{use.key}"
        if self._known(key):
            return
        is_error, code = h.is_error, h.exit_code
        if is_error is None:  # Codex: the exit code is in the rollout, not the payload
            if self.transcript_path and h.tool_use_id:
                from git_gasp.adapters.codex import exit_code_for

                code = exit_code_for(self.transcript_path, h.tool_use_id)
            is_error = code is not None and code != 0
        self._add(Record(TOOL_RESULT, key, use.key, None, {
            "tool_use_id": use.key, "output": _keep_output(h.output or ""),
            "is_error": bool(is_error), "exit_code": code}))

    def stop(self, h: HookEvent) -> None:
        if h.last_message:
            import hashlib

            from git_gasp.runtime.state import _AUTO

            text = self.r.text(h.last_message)[:2000]
            digest = hashlib.sha256(text.encode()).hexdigest()[:16]
            self.observation(f"stop:{self.prompts}:{digest}", text, self.run_id,
                             self._src("stop", hook="Stop"), _AUTO)

    def end(self, h: HookEvent, root: Path) -> tuple[str, str, list[str]]:
        """run.finished (+ the archived transcript); return (run id, outcome, paths)."""
        import hashlib

        st = self.state
        paths: list[str] = []
        if self.transcript_path and Path(self.transcript_path).is_file():
            from git_gasp.adapters.records import read_raw

            archive = redacted_archive(read_raw(Path(self.transcript_path)), Redactor())
            rel = f"transcripts/{self.run_id}.jsonl.gz"
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(archive)
            st.attach_artifact(self.run_id, kind="transcript", uri=rel,
                               hash="sha256:" + hashlib.sha256(archive).hexdigest(),
                               summary=f"{self.agent} session transcript (redacted)")
            paths.append(rel)
        kinds = [k.split(":", 1)[0] for k in self.emitted]
        outcome = outcome_of(kinds)
        st.finish_run(outcome, run_id=self.run_id,
                      metadata=self._src(None, end_reason=h.reason, recorded_by="hooks"))
        return self.run_id, outcome, paths


# --- the handler --------------------------------------------------------------------------


def process(state: Any, h: HookEvent, gdir: Path, root: Path,
            entry: str | None = None) -> str:
    """Record one hook event (queue entry `entry`); return a short description of what
    was done. Recording the same entry again adds nothing: every node id is stable and
    the session's progress is saved after each record."""
    if h.event not in ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse",
                       "PostToolUseFailure", "Stop", "SessionEnd"):
        return f"{h.event}: not recorded"
    sess = HookSession(state, h, gdir)
    sess.ensure_run(h)
    commit = None
    if h.event == "UserPromptSubmit":
        sess.prompt(h, entry)
    elif h.event == "PreToolUse":
        sess.pre_tool(h)
    elif h.event in ("PostToolUse", "PostToolUseFailure"):
        sess.post_tool(h)
    elif h.event == "Stop":
        sess.stop(h)
    elif h.event == "SessionEnd":
        commit = sess.end(h, root)
    sess.save()
    if commit is not None:
        from git_gasp.runtime import commit_run

        run_id, outcome, paths = commit
        sha = commit_run(root, run_id, sess.goal, outcome, paths,
                         log_rel=state.store.rel)
        sha = sha.decode() if isinstance(sha, bytes) else str(sha)
        return f"SessionEnd: {run_id} finished ({outcome}), committed {sha[:12]}"
    return f"{h.event}: recorded in {sess.run_id}"


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


def drain(root: Path, gdir: Path, deadline: float) -> int:
    """Record every queued entry in order (the caller holds hook.lock); return how many."""
    from git_gasp.runtime import AgentState

    entries = queued(gdir)
    if not entries:
        return 0
    state = AgentState.open(root, f"git-gasp-hook-{os.getpid()}", lease_ttl_ms=LEASE_TTL_MS)
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
                try:
                    item = json.loads(entry.read_text(encoding="utf-8"))
                    h = parse_hook_payload(item["payload"], item.get("agent"))
                    what = process(state, h, gdir, root, entry.name)
                    log(gdir, f"{h.agent} {h.session_id}: {what}")
                    entry.unlink()
                    done += 1
                except FileNotFoundError:
                    continue  # another drainer took it (should not happen under the lock)
                except Exception as exc:  # noqa: BLE001 - never block the queue on one entry
                    failed = queue_dir(gdir) / "failed"
                    failed.mkdir(exist_ok=True)
                    with contextlib.suppress(OSError):
                        os.replace(entry, failed / entry.name)
                    log(gdir, f"{entry.name}: {type(exc).__name__}: {exc}; moved to "
                              f"queue/failed/\n{traceback.format_exc(limit=4)}")
                    state = _reopen(state, root)
            entries = queued(gdir)
    finally:
        state.close()
    return done


def _reopen(state: Any, root: Path) -> Any:
    """A fresh AgentState after a failed entry (its in-memory state may be off)."""
    from git_gasp.runtime import AgentState

    worker = state.store.lease.worker_id
    fresh = AgentState.open(root, worker, lease_ttl_ms=LEASE_TTL_MS)
    return fresh


def run_hook(data: bytes, *, agent: str | None = None, repo: str | None = None,
             budget_s: float | None = None) -> str:
    """Handle one hook invocation; never raises. Returns what happened (for tests/logs)."""
    start = time.monotonic()
    budget = budget_s if budget_s is not None else float(
        os.environ.get("GASP_HOOK_BUDGET") or HOOK_BUDGET_S)
    deadline = start + budget
    gdir = None
    try:
        try:
            payload = json.loads(data)
        except ValueError:
            payload = None
        cwd = payload.get("cwd") if isinstance(payload, dict) else None
        root = find_agent_root(repo) if repo else (find_agent_root(cwd)
                                                   or find_agent_root(os.getcwd()))
        if root is None:
            return "no agent repo (AGENT.md) at or above the session's directory; ignored"
        gdir = gasp_dir(root)
        if not isinstance(payload, dict):
            log(gdir, f"hook payload is not a JSON object ({len(data)} bytes); ignored")
            return "bad payload"
        clean = Redactor().value(payload)
        h = parse_hook_payload(clean, agent)
        enqueue(gdir, h.agent, clean)
        with hook_lock(gdir, min(LOCK_WAIT_S, max(0.0, deadline - time.monotonic()))) as got:
            if not got:
                log(gdir, f"{h.agent} {h.session_id} {h.event}: another hook is busy; queued")
                return "queued"
            n = drain(root, gdir, deadline)
        return f"recorded {n} event(s)"
    except Exception as exc:  # noqa: BLE001 - a hook never breaks the agent
        log(gdir, f"error: {type(exc).__name__}: {exc}\n{traceback.format_exc(limit=6)}")
        return f"error: {exc}"
