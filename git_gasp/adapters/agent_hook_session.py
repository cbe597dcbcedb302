"""One agent session as its live hooks see it: the events one hook payload records.

`HookSession` resumes a session from its progress file under the git dir (never
committed): ``<gitdir>/gasp/sessions/<agent>.<session id>.json`` while its run is open,
``sessions/closed/…`` once it is closed. The progress is small and bounded: the lifting
rules' state (`lifting.Lifter`), the keys of the last records (to recognise a replayed
payload), the record being written (write-ahead: saved before its events are
appended, written again, idempotently, after a crash) and counters. So the work of one
hook is proportional to what it adds, however long the session.

``hook_queue.process`` maps one hook event onto it (see ``live.py`` for the mapping and
the queue around it). A run whose session ended without SessionEnd (Codex, a killed Claude Code)
is closed by the next SessionStart or Stop of the same agent in this repo
(``session_sweep.py``) or by ``git gasp adapt … reconcile`` (``reconcile.py``).
"""

from __future__ import annotations

import json
import os
import time
from hashlib import sha256
from typing import Any

from git_gasp.adapters.agent_hook import handoff
from git_gasp.adapters.codex import exit_codes
from git_gasp.adapters.lifting import Lifted, Lifter
from git_gasp.adapters.payloads import HookEvent
from git_gasp.adapters.records import TOOL_RESULT, TOOL_USE, USER_PROMPT, Record, read_raw
from git_gasp.adapters.session_close import (
    agent_process,
    archive_transcript,
    locate_transcript,
    record_model_turns,
)
from git_gasp.adapters.session_writer import SessionWriter, outcome_of, run_id_for
from git_gasp.base.fileops import remove_file
from git_gasp.base.files import atomic_write, open_file, read_text
from git_gasp.redact.paths import transcript_ref
from git_gasp.runtime.state import _AUTO, AgentState, OpenRun, create_node, relate, update_node

KEEP_HEAD, KEEP_TAIL = 1000, 3000  # of a tool output kept for the lifting rules
RECENT = 256  # record keys remembered to recognise a replayed payload
EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse",
          "PostToolUseFailure", "Stop", "SessionEnd", "ModelRequest", "ModelResponse")


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


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return sha256(text.encode("utf-8", "replace")).hexdigest()[:16]


def _lifted(d: dict) -> Lifted:
    return Lifted(d["rule"], d["kind"], d["key"], d["after"], dict(d.get("data") or {}))


class HookSession(SessionWriter):
    """One agent session as seen through its hooks, resumed from its progress file."""

    def __init__(self, state: AgentState, agent: str, session_id: str, gdir: str, *,
                 cwd: str | None = None, transcript_path: str | None = None,
                 recorded_by: str = "hooks") -> None:
        base = run_id_for(agent, session_id)
        safe = base[len("run_"):]
        self.gdir = gdir = os.fspath(gdir)
        self.path = os.path.join(gdir, "sessions", f"{safe}.json")
        self.closed_path = os.path.join(gdir, "sessions", "closed", f"{safe}.json")
        side, self.closed = self._load()
        self.home = side.get("home") or os.environ.get("HOME")  # the agent's, as it ran
        super().__init__(state, agent, session_id, side.get("run_id") or base,
                         cwd=cwd or side.get("cwd"), home=self.home)
        self.base = base
        self.goal: str | None = side.get("goal")
        self.prompts: int = int(side.get("prompts", 0))
        usable = transcript_path if transcript_path and os.path.isabs(transcript_path) and \
            "[REDACTED" not in transcript_path else None  # not a run's archive path
        self.transcript_path = usable or side.get("transcript_path") or transcript_path
        self.proc: dict | None = side.get("proc")
        self.last_ms: int = int(side.get("last_ms") or self._mtime_ms())
        self.tools: dict = side.get("tools") or {}
        self.rollout: dict = side.get("rollout") or {}
        self.last_prompt: list | None = side.get("last_prompt")
        self.pending: dict | None = side.get("pending")
        self.open_call: dict | None = side.get("model_call")  # open (``dialects/models.py``)
        self.event_of.update(side.get("causes") or {})  # what a model turn's cause may be
        self.turns: int = int(side.get("turns") or 0)  # model responses recorded (all runs)
        # what records the session, in its run's metadata: "hooks", or "proxy"
        self.recorded_by: str = side.get("recorded_by") or recorded_by
        if "lifter" in side or "records" not in side:
            self.lifter = Lifter(side.get("lifter"))
            self.kinds: dict[str, int] = dict(side.get("kinds") or {})
            self.recent: list[str] = list(side.get("recent") or [])
        else:  # progress written before the lifting was incremental: replay it once
            self.lifter, self.kinds, self.recent = Lifter(), {}, []
            for r in side.get("records") or []:
                rec = Record(**r)
                for item in self.lifter.feed(rec):
                    self.kinds[item.kind] = self.kinds.get(item.kind, 0) + 1
                self.recent = (self.recent + [rec.key])[-RECENT:]

    def transcript(self) -> str | None:
        """The session's transcript file: the payload's path, else found by session id
        (a path the redaction mangled, say); None when neither exists."""
        path = self.transcript_path
        if path and os.path.isfile(path):  # False for any OSError (a name too long, say)
            return path
        found = locate_transcript(self.agent, self.session_id)
        if found:
            self.transcript_path = found
        return found

    @classmethod
    def for_event(cls, state: AgentState, h: HookEvent, gdir: str) -> HookSession:
        return cls(state, h.agent, h.session_id, gdir, cwd=h.cwd,
                   transcript_path=h.transcript_path)

    def _mtime_ms(self) -> int:
        try:
            return int(os.stat(self.closed_path if self.closed else self.path).st_mtime * 1000)
        except OSError:
            return 0

    def _load(self) -> tuple[dict, bool]:
        for path, closed in ((self.path, False), (self.closed_path, True)):
            try:
                side = json.loads(read_text(path))
            except (OSError, ValueError):
                continue
            if isinstance(side, dict):
                return side, closed
        return {}, False

    def save(self) -> None:
        """Write this session's progress (whole or not at all) under the git dir."""
        data = {"agent": self.agent, "session_id": self.session_id, "run_id": self.run_id,
                "cwd": self.cwd, "home": self.home,
                "transcript_path": self.transcript_path, "goal": self.goal,
                "prompts": self.prompts, "proc": self.proc, "last_ms": self.last_ms,
                "lifter": self.lifter.to_json(), "kinds": self.kinds, "recent": self.recent,
                "tools": self.tools, "rollout": self.rollout,
                "last_prompt": self.last_prompt, "pending": self.pending,
                "model_call": self.open_call,
                "causes": dict(list(self.event_of.items())[-RECENT:]), "turns": self.turns,
                "recorded_by": self.recorded_by}
        body = json.dumps(data, ensure_ascii=False).encode("utf-8")
        path = self.closed_path if self.closed else self.path
        atomic_write(path, body, root=os.path.dirname(self.gdir), make_parents=True)
        if self.closed:
            remove_file(self.path)

    # --- the run ---------------------------------------------------------------------
    def _reset(self, run_id: str) -> None:
        self.run_id = run_id
        self.lifter, self.kinds, self.recent, self.pending = Lifter(), {}, [], None
        self.goal, self.prompts, self.tools, self.last_prompt = None, 0, {}, None
        self.closed = False

    def running(self) -> bool:
        node = self.state.graph.node(self.run_id)
        return node is not None and node["props"].get("status") == "running"

    def make_current(self) -> None:
        """Make this session's (running) run the state's open run."""
        st = self.state
        if st.run is not None and st.run.run_id == self.run_id:
            return
        # Another session's run may be open: switch to ours (AgentState keeps one open
        # run; the other resumes the same way when its hooks arrive).
        props = st.graph.node(self.run_id)["props"]
        started = props.get("started_event") or st.creator_of(self.run_id)
        st.run = OpenRun(self.run_id, started, props.get("goal_id"), props.get("task_id"))

    def ensure_run(self, h: HookEvent) -> None:
        """Make this session's run the state's open run, starting (or continuing) it."""
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
        self.closed = False
        if node is not None:
            self.make_current()
            return
        st.run = None  # leave any other open run running; ours becomes the open one
        st.start_run(f"{h.agent} session {h.session_id}", run_id=self.run_id,
                     metadata=self._src(None, cwd=self.paths.path(self.cwd), model=h.model,
                                        transcript_path=self._transcript_ref(),
                                        recorded_by=self.recorded_by,
                                        start_source=h.reason),
                     derived_from=self._handed_off(h.agent))

    def _handed_off(self, agent: str) -> str | None:
        """The run a new session continues (`git gasp resume`'s hand-off, taken here:
        ``hook/handoff.py``), only for a session's first run and a run of this log."""
        if self.run_id != self.base:
            return None  # a resumed session going on in a new run: not a hand-off
        pid = self.proc.get("pid") if isinstance(self.proc, dict) else None
        from_run = handoff.take(self.gdir, agent, pid if isinstance(pid, int) else None)
        node = self.state.graph.node(from_run) if from_run else None
        return from_run if node is not None and node["kind"] == "run" else None

    def _transcript_ref(self) -> str | None:
        """How run.started names the transcript: where its archive will be (the path
        itself only under ``[capture] paths = "absolute"``)."""
        if self.capture.paths == "absolute":
            return self.transcript_path
        archive = f"transcripts/{self.run_id}.jsonl.gz" if self.capture.transcripts else None
        return transcript_ref(self.transcript_path, archive)

    def note_process(self, entry: str | None) -> None:
        """Remember the agent process that queued `entry`: the queue names an entry
        ``<time>-<pid>-<random>…``, the pid being the agent's (the hook found it before it
        exited) or, for an entry this very process queued, its own."""
        self.last_ms = int(time.time() * 1000)
        parts = (entry or "").split("-")
        if len(parts) >= 2 and parts[1].isdigit() and int(parts[1]) > 1:
            pid = int(parts[1])
            self.proc = agent_process(None if pid == os.getpid() else pid) or self.proc

    def is_replay(self, h: HookEvent) -> bool:
        """For a closed session: True when `h` only repeats what closed run recorded."""
        if h.event in ("SessionEnd", "Stop"):
            return True
        if h.event == "SessionStart":
            return h.reason == "startup"  # a session starts up once
        if h.event == "UserPromptSubmit":
            return self._prompt_key(h) in self.recent
        if h.event in ("ModelRequest", "ModelResponse"):
            return True  # a closed run's model calls are closed
        if h.event == "PreToolUse":
            key = self._use_key(h)
            return self._seen(key, self.tool_call_id(key))
        return not self._post_key(h)[0]

    # --- records ---------------------------------------------------------------------
    def resume_pending(self) -> None:
        """Write again the record a crashed hook was writing (its events are idempotent)."""
        if self.pending:
            pend, self.pending = self.pending, None
            self._write(Record(**pend["rec"]), [_lifted(d) for d in pend["items"]])

    def _add(self, rec: Record) -> None:
        items = self.lifter.feed(rec)
        for item in items:
            self.kinds[item.kind] = self.kinds.get(item.kind, 0) + 1
        self.recent = (self.recent + [rec.key])[-RECENT:]
        self.pending = {"rec": rec.as_dict(), "items": [
            {"rule": i.rule, "kind": i.kind, "key": i.key, "after": i.after, "data": i.data}
            for i in items]}
        self.save()  # write-ahead: a crash from here on writes this record again
        self._write(rec, items)

    def _write(self, rec: Record, items: list[Lifted]) -> None:
        if rec.kind == TOOL_USE:
            self.tool_called(rec, None)  # nothing when recorded already (a replayed entry)
        elif rec.kind == TOOL_RESULT:
            self.tool_finished(rec, None)
        for item in items:
            if item.kind == "goal":
                self._goal(item)
            else:
                self.lifted(item, rec.key, self.goal)

    def _goal(self, item: Any) -> None:
        """goal.created whose ops pair also links the open run to it (run serves goal)."""
        st = self.state
        gid = self.stable_id("goal", item.key)
        if st.graph.has_node(gid):  # recorded already (a replayed hook entry)
            if st.creator_of(gid):
                self.event_of[item.after] = st.creator_of(gid)
            self.node_of[item.key] = self.goal = gid
            if st.run is not None:
                st.run.goal_id = gid
            return
        meta = self._src(item.after, **item.metadata)
        title = self.kept(item.data["title"], "title", meta)
        summary = self.kept(item.data["summary"], "summary", meta)
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

    @staticmethod
    def _prompt_id(h: HookEvent) -> str | None:
        pid = h.raw.get("prompt_id") or h.raw.get("turn_id")
        return pid if isinstance(pid, str) and pid else None

    def _prompt_key(self, h: HookEvent) -> str:
        pid = self._prompt_id(h)
        return f"prompt:{pid}" if pid else f"prompt:{self.prompts + 1}"

    def prompt(self, h: HookEvent) -> None:
        key = self._prompt_key(h)
        text = h.prompt or ""
        if key in self.recent:
            return  # recorded already (a replayed payload)
        if self._prompt_id(h) is None and self.last_prompt and self.recent and \
                self.last_prompt == [self.recent[-1], _digest(text)]:
            return  # the same prompt again with nothing in between (a replayed payload)
        self.prompts += 1
        self.last_prompt = [key, _digest(text)]
        self._add(Record(USER_PROMPT, key, None, None, {"text": text}))

    def _turn(self, h: HookEvent) -> str:
        turn = h.raw.get("turn_id") or h.raw.get("prompt_id")
        return turn if isinstance(turn, str) and turn else f"p{self.prompts}"

    def _use_key(self, h: HookEvent) -> str:
        """The tool call's key: its tool_use_id, else stable from the turn, the tool name
        and a hash of its input (``tool:<turn>:<name>:<input hash>``)."""
        if h.tool_use_id:
            return h.tool_use_id
        return f"tool:{self._turn(h)}:{h.tool_name or 'unknown'}:{_digest(h.tool_input)}"

    def _seen(self, key: str, node: str) -> bool:
        return key in self.recent or self.state.graph.has_node(node)

    def _post_key(self, h: HookEvent) -> tuple[str, str | None]:
        """(the call's key, its output hash or None) for a tool result; key "" when the
        result is recorded already (a replayed payload). Without a tool_use_id, a second
        call of the same input in the same turn is told apart by its output:
        ``<key>:<output hash>`` (the same call with the same output is one call)."""
        key = self._use_key(h)
        if h.tool_use_id:
            return ("" if f"result:{key}" in self.recent else key), None
        out = _digest([h.output, h.is_error, h.exit_code])
        seq = self.tools.get("seq", {}) if self.tools.get("turn") == self._turn(h) else {}
        first = seq.get(key)
        if first is None:
            return key, out
        if first == out:
            return "", out
        key = f"{key}:{out}"
        return ("" if self._seen(f"result:{key}", self.stable_id(
            "observation", f"result:{key}")) else key), out

    def _use_record(self, h: HookEvent, key: str) -> Record:
        name = h.tool_name or "unknown"
        return Record(TOOL_USE, key, None, None, {
            "tool_use_id": key, "name": name,
            "input": _clip(self.capture.file_digests(
                name, h.tool_input if h.tool_input is not None else {})),
            "message_id": None})

    def pre_tool(self, h: HookEvent) -> None:
        key = self._use_key(h)
        if not self._seen(key, self.tool_call_id(key)):
            self._add(self._use_record(h, key))

    def post_tool(self, h: HookEvent) -> None:
        key, out = self._post_key(h)
        if not key:
            return  # recorded already (a replayed payload)
        if out is not None:
            turn = self._turn(h)
            if self.tools.get("turn") != turn:
                self.tools = {"turn": turn, "seq": {}}
            self.tools["seq"].setdefault(self._use_key(h), out)
        if key not in self.recent:
            self._add(self._use_record(h, key))  # PreToolUse was missed: record the call now
        is_error, code = h.is_error, h.exit_code
        if is_error is None:  # Codex: the exit code is in the rollout, not the payload
            code = self._exit_code(h.tool_use_id)
            is_error = code is not None and code != 0
        data = {"tool_use_id": key, "output": (h.output or "") if self.capture.tool_output ==
                "full" else _keep_output(h.output or ""),  # full: the writer bounds it
                "is_error": bool(is_error), "exit_code": code,
                "bytes": len((h.output or "").encode("utf-8", "surrogatepass"))}
        response = self.capture.response(h.tool_name or "unknown",
                                         h.raw.get("tool_response"))
        if response is not None:  # bounded (file contents as digests) before it is kept
            data["response"] = response
        self._add(Record(TOOL_RESULT, f"result:{key}", key, None, data))

    def _exit_code(self, call_id: str | None) -> int | None:
        """The exit code the Codex rollout records for `call_id`, reading only what was
        appended to it since the last look (the codes seen are kept until used)."""
        rollout = self.transcript() if call_id else None
        if not rollout:
            return None
        path = rollout
        codes: dict = dict(self.rollout.get("codes") or {})
        offset = int(self.rollout.get("offset") or 0)
        try:
            if path.endswith((".zst", ".gz")):
                data, offset, codes = read_raw(path), 0, {}
            else:
                with open_file(path) as fh:
                    if fh.seek(0, 2) < offset:
                        offset, codes = 0, {}  # rewritten: read it again
                    fh.seek(offset)
                    data = fh.read()
                data = data[: data.rfind(b"\n") + 1]  # whole lines only
                offset += len(data)
        except Exception:  # noqa: BLE001 - best effort: the rollout may be gone or partial
            return None
        for cid, found in exit_codes(data).items():
            if found[1] or not (codes.get(cid) or [None, False])[1]:
                codes[cid] = found
        code = (codes.pop(call_id, None) or [None])[0]
        self.rollout = {"offset": offset, "codes": dict(list(codes.items())[-64:])}
        return code

    def stop(self, h: HookEvent) -> None:
        self.turns = record_model_turns(self, self.transcript(), self.turns)
        if h.last_message:
            meta = self._src("stop", hook="Stop")
            text = self.kept(h.last_message, "summary", meta, chars=2000)
            digest = sha256(text.encode()).hexdigest()[:16]
            self.observation(f"stop:{self.prompts}:{digest}", text, self.run_id, meta, _AUTO)

    def close(self, root: str, *, how: str, reason: str | None = None,
              abandoned: bool = False) -> tuple[str, str, list[str]]:
        """run.finished (+ the archived transcript); return (run id, outcome, paths).

        `how`: what closed it (``SessionEnd``, ``next-session``, ``reconcile``)."""
        st = self.state
        self.make_current()
        self.turns = record_model_turns(self, self.transcript(), self.turns)
        arch = archive_transcript(st, self.run_id, self.agent, self.transcript(), root)
        kinds = [k for k, n in self.kinds.items() if n]
        outcome = "abandoned" if abandoned else outcome_of(kinds)
        meta = self._src(None, end_reason=reason, recorded_by=self.recorded_by, closed_by=how,
                         models=self.models())
        if arch:
            meta["transcript"] = arch
        st.finish_run(outcome, run_id=self.run_id, metadata=meta)
        self.closed = True
        self.pending = None
        self.save()
        return self.run_id, outcome, [arch["uri"]] if arch else []

    def end(self, h: HookEvent, root: str) -> tuple[str, str, list[str]]:
        return self.close(root, how="SessionEnd", reason=h.reason)
