"""The proxy's recorder: model calls into the agent state, off the request path.

The relay hands each finished model call (``exchange.Exchange``) to :meth:`Recorder.submit`;
one thread records them in order through the hooks' own session writer
(``adapters.agent_hook_session.HookSession``, so the same redaction, capture rules, lifting
and stable ids), holding the repository's lease only while it writes:

- the first call of a session starts its run (``run_proxy.<session id>``, its progress
  under ``<gitdir>/gasp/sessions/`` like a hook session's);
- the tool results a request carries → ``tool.finished`` + an observation (the call
  too, when the proxy did not see it asked for); the user's new text → the goal (first)
  or a task;
- the call itself → ``model.called`` + ``model.finished`` (model, token usage, stop
  reason, latency; failed for an upstream error, aborted when the client left);
- the tool calls the reply asks for → ``tool.called``;
- what could not be read → an observation of the run marked as a failure;
- commits made in the project since the last call → patches pinned to them.

A session ends after an idle gap (``sessions.py``) or when the proxy stops: its run
finishes and is committed like a hook session's (``session_sweep.commit_closed``).
Calls that cannot be recorded because another writer holds the lease wait and are
recorded on the next tick, in order; a failure is written to ``adapter.log``.
"""

from __future__ import annotations

import collections
import concurrent.futures
import os
import queue
import threading
import time
import traceback
from hashlib import sha256

from git_gasp.adapters.agent_hook.queue_files import log
from git_gasp.adapters.agent_hook_session import HookSession
from git_gasp.adapters.live import gasp_dir
from git_gasp.adapters.payloads import HookEvent
from git_gasp.adapters.session_sweep import close_session, commit_closed, open_sessions
from git_gasp.proxy import commits
from git_gasp.proxy.dialect import ANTHROPIC, CHAT, GEMINI, RESPONSES
from git_gasp.proxy.exchange import Exchange
from git_gasp.proxy.sessions import IDLE_S, SessionTracker
from git_gasp.redact import capture
from git_gasp.redact.redactor import Redactor
from git_gasp.runtime import AgentState
from git_gasp.store.lease import LeaseHeld
from git_gasp.store.lease_wait import take

AGENT = "proxy"
# the vendor of each API the proxy relays (a model call's ``provider``)
VENDORS = {ANTHROPIC: "anthropic", CHAT: "openai", RESPONSES: "openai", GEMINI: "google"}
TICK_S = 0.5
LEASE_WAIT_S = 5.0
LEASE_TTL_MS = 60_000
_STOP = object()


class Recorder:
    """Records the model calls the proxy relays into the agent state at `root`; `cwd` is
    the project whose commits are pinned as patches."""

    def __init__(self, root: str, cwd: str, *, idle_s: float = IDLE_S) -> None:
        self.root, self.cwd = os.fspath(root), os.fspath(cwd)
        self.gdir = gasp_dir(self.root)
        self.tracker = SessionTracker(idle_s)
        self.queue: queue.Queue = queue.Queue()
        self.waiting: collections.deque = collections.deque()  # (session id, exchange)
        self.state: AgentState | None = None
        self.sessions: dict[str, HookSession] = {}
        self.heads: dict[str, str | None] = {}  # session id -> project HEAD last seen
        self.last_call: dict[str, str] = {}  # session id -> record key of its last call
        self.closed: list[str] = []  # what each session's end did (for the person)
        self.swept = False  # the runs an earlier proxy left open looked at
        self.lock = threading.Lock()  # the tracker and first_heads: both threads use them
        self.first_heads: dict[str, concurrent.futures.Future] = {}  # new session -> HEAD
        self.pool = concurrent.futures.ThreadPoolExecutor(1, "gasp-proxy-head")
        self.reading: concurrent.futures.Future | None = None  # the HEAD read under way
        self.redactor = Redactor()  # names and ids from outside, as a hook payload's are
        self.thread = threading.Thread(target=self._loop, name="gasp-proxy-recorder",
                                       daemon=True)
        self.thread.start()

    # --- the relay's side -----------------------------------------------------------
    def begin(self, ex: Exchange) -> concurrent.futures.Future | None:
        """A model call arrived: its session; for a new session, the future of the
        project's HEAD read on a worker thread (the relay waits for it before relaying
        the call, so a commit made while the call runs counts as the session's work,
        however late the call is recorded). Returns at once."""
        header = self.redactor.field("session_id", ex.session) if ex.session else None
        with self.lock:
            ex.session_id = sid = self.tracker.session_for(header, ex.started)
            if sid in self.sessions or sid in self.heads or sid in self.first_heads:
                return None
            if self.reading is None or self.reading.done():  # else: shared, still under way
                self.reading = self.pool.submit(commits.head, self.cwd)
            self.first_heads[sid] = self.reading
            return self.reading

    def submit(self, ex: Exchange) -> None:
        """Record `ex` (returns at once)."""
        self.queue.put(ex)

    def flush(self) -> None:
        """Wait until everything submitted so far was handled."""
        self.queue.join()

    def close(self) -> list[str]:
        """Record what is left, end every open session, stop; what the ends did."""
        self.queue.put(_STOP)
        self.thread.join()
        return self.closed

    # --- the thread -----------------------------------------------------------------
    def _loop(self) -> None:
        while True:
            try:
                item = self.queue.get(timeout=TICK_S)
            except queue.Empty:
                item = None
            try:
                if item is _STOP:
                    with self.lock:
                        ending = self.tracker.all()
                    self._write(end=ending, wait=True)
                    if self.state is not None:
                        self.state.close()
                    self.pool.shutdown()
                    return
                if item is not None:
                    if item.session_id is None:  # not begun (a caller without on_begin)
                        self.begin(item)
                    self.waiting.append((item.session_id, item))
                with self.lock:
                    idle = self.tracker.idle(time.time())
                self._write(end=idle)
            except Exception as exc:  # noqa: BLE001 - the recorder never stops the relay
                log(self.gdir, f"proxy: recording failed: {type(exc).__name__}: {exc}\n"
                               f"{traceback.format_exc(limit=6)}")
                if self.state is not None:
                    self.state.close()  # the lease given back; reopened for the next call
                self.state, self.sessions = None, {}
                if item is _STOP:
                    self.closed.append(f"not all recorded: {type(exc).__name__}: {exc} "
                                       "(see .git/gasp/adapter.log)")
                    self.pool.shutdown()
                    return
            finally:
                if item is not None:
                    self.queue.task_done()

    def _open(self) -> AgentState:
        if self.state is None:
            self.state = AgentState.open(self.root, f"git-gasp-proxy-{os.getpid()}",
                                         lease_ttl_ms=LEASE_TTL_MS, end_state=True)
        return self.state

    def _lease(self, st: AgentState, wait_s: float) -> bool:
        """Hold the lease (waiting up to `wait_s` s for a writer at work), then fold what
        others appended; False when it is still held."""
        try:
            take(st.store.lease, wait_s)
        except LeaseHeld:
            return False
        st.refresh()
        return True

    def _write(self, *, end: list[str], wait: bool = False) -> None:
        """Record the waiting calls, then end the sessions `end`, under the lease."""
        if not self.waiting and not end:
            return
        st = self._open()
        if not self._lease(st, LEASE_WAIT_S * (6 if wait else 1)):
            holder = st.store.lease.read()
            who = holder.describe() if holder else "another writer"
            log(self.gdir, f"proxy: lease held by {who}; {len(self.waiting)} model call(s) "
                + ("not recorded and the sessions left open (the next proxy closes them)"
                   if wait else "wait"))
            if wait:
                self.closed.append(f"not recorded: {len(self.waiting)} model call(s), the "
                                   f"lease held by {who}")
            with self.lock:
                for sid in end:  # not ended yet: the next tick ends them
                    self.tracker.last_seen.setdefault(sid, 0.0)
            return
        try:
            if not self.swept:
                self._sweep(st)
            while self.waiting:
                sid, ex = self.waiting.popleft()
                try:
                    self._record(st, sid, ex)
                except Exception as exc:  # noqa: BLE001 - one odd call must not block the rest
                    log(self.gdir, f"proxy {sid}: a model call not recorded: "
                                   f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=6)}")
                    st.refresh()
            for sid in end:
                self._end(st, sid)
            st.save_end_state()
        finally:
            st.release()

    def _sweep(self, st: AgentState) -> None:
        """Close the runs of sessions an earlier proxy left open (killed before it could
        end them) once they are quiet for the hooks' stale time (``GASP_SESSION_STALE_S``,
        6 hours): abandoned, and committed."""
        self.swept = True
        for path in open_sessions(self.gdir, AGENT):
            done = close_session(st, path, self.gdir, self.root, how="proxy-restart")
            if done:
                self.closed.append(str(done))
                log(self.gdir, f"proxy: {done}")
        st.run = None

    # --- one call -------------------------------------------------------------------
    def _session(self, st: AgentState, sid: str, model: str | None) -> HookSession:
        sess = self.sessions.get(sid)
        if sess is None:
            sess = self.sessions[sid] = HookSession(st, AGENT, sid, self.gdir, cwd=self.cwd,
                                                    recorded_by="proxy")
            with self.lock:
                first = self.first_heads.pop(sid, None)
            if sid not in self.heads:
                self.heads[sid] = first.result() if first is not None else commits.head(self.cwd)
        sess.ensure_run(HookEvent(AGENT, "SessionStart", sid, cwd=self.cwd, model=model,
                                  reason="proxy"))
        sess.resume_pending()
        return sess

    def _record(self, st: AgentState, sid: str, ex: Exchange) -> None:
        model = ex.reply.model or ex.asked.model
        sess = self._session(st, sid, model)
        self._pin_commits(sess, sid)
        # redacted as a hook payload is before the session sees it (the lifting rules
        # keep what they are given in the progress file under the git dir)
        field, red = self.redactor.field, self.redactor
        calls = {c.id: c for c in ex.asked.calls}
        for res in ex.asked.results:
            rid = field("tool_use_id", res.id)
            if sess.node_for(f"result:{rid}") is not None:
                continue  # recorded from an earlier request of the conversation
            call = calls.get(res.id)
            sess.post_tool(HookEvent(AGENT, "PostToolUse", sid, cwd=self.cwd,
                                     tool_name=field("tool_name", call.name) if call else None,
                                     tool_input=red.value(call.input) if call else None,
                                     tool_use_id=rid, output=red.text(res.output),
                                     is_error=res.is_error))
        if ex.asked.prompt:
            sess.prompt(HookEvent(AGENT, "UserPromptSubmit", sid, cwd=self.cwd,
                                  prompt=red.text(ex.asked.prompt)))
        key = model_call(sess, ex, model)
        self.last_call[sid] = key
        for call in ex.reply.calls:
            sess.pre_tool(HookEvent(AGENT, "PreToolUse", sid, cwd=self.cwd,
                                    tool_name=field("tool_name", call.name),
                                    tool_input=red.value(call.input),
                                    tool_use_id=field("tool_use_id", call.id)))
        if ex.problems:
            text = sess.r.text("; ".join(ex.problems))[:capture.SUMMARY_CHARS]
            sess.observation(f"proxy-failure:{key}", text, sess.node_for(key) or sess.run_id,
                             {**self._src(sess, key), "failure": True, "api": ex.api},
                             sess.event_of.get(key))
        sess.pending = None
        sess.save()

    @staticmethod
    def _src(sess: HookSession, key: str) -> dict:
        return {"source": {"agent": sess.agent, "session_id": sess.session_id, "key": key}}

    def _pin_commits(self, sess: HookSession, sid: str) -> None:
        """Patches for the commits made in the project since the session's last look."""
        now, found = commits.new_commits(self.cwd, self.heads.get(sid))
        self.heads[sid] = now or self.heads.get(sid)
        after = self.last_call.get(sid, "")
        for sha, subject, files in found:
            item = commits.patch_item(sha, subject, files, after)
            sess.lifted(item, after, sess.goal)
            sess.kinds["patch"] = sess.kinds.get("patch", 0) + 1

    def _end(self, st: AgentState, sid: str) -> None:
        """Finish session `sid`'s run and make its boundary commit."""
        sess = self.sessions.pop(sid, None)
        if sess is None or not sess.running():
            return
        self._pin_commits(sess, sid)
        closed = sess.close(self.root, how="proxy", reason="idle or proxy stopped")
        done = commit_closed(st, self.root, sess, closed)
        self.closed.append(str(done))
        log(self.gdir, f"proxy {sid}: {done}")
        self.heads.pop(sid, None)
        self.last_call.pop(sid, None)


def model_call(sess: HookSession, ex: Exchange, model: str | None) -> str:
    """model.called + model.finished of `ex`, through the adapters' one model-call
    writer (``SessionWriter.model_called`` / ``model_finished``); its record key."""
    key = "model:" + sha256(f"{ex.started}:{id(ex)}".encode()).hexdigest()[:20]
    sess.make_current()
    sess.model_called(key, model, input_text=ex.asked.prompt or "",
                      provider=VENDORS.get(ex.api), metadata={
                          "api": ex.api, "path": sess.r.text(ex.path.split("?")[0]),
                          "stream": ex.asked.stream, "request_bytes": ex.body_size})
    mid = sess.node_of[key] = sess.model_call_id(key)
    sess.event_of[key] = sess.state.creator_of(mid) or ""
    error = ex.reply.error
    if ex.status is not None and ex.status >= 400:
        error = f"HTTP {ex.status}" + (f": {error}" if error else "")
    if ex.outcome == "aborted":
        error = "aborted: " + ("; ".join(ex.problems) or "the response did not end")
    elif ex.outcome == "failed":
        error = "; ".join(ex.problems) or "upstream failed"
    sess.model_finished(mid, "".join(ex.reply.text), usage=ex.reply.usage,
                        stop_reason=ex.reply.stop_reason, duration_ms=ex.duration_ms,
                        error=error, metadata={
                            "status": ex.status, "outcome": ex.outcome,
                            "streamed": ex.streamed, "tool_calls": len(ex.reply.calls)})
    return key
