"""One agent session as its live hooks see it: the events one hook payload records.

`HookSession` resumes a session from its progress file
(``<gitdir>/gasp/sessions/<agent>.<session id>.json``: the records so far and which
node and event recorded each) and writes each new record through the shared
`SessionWriter`, then what the lifting rules infer right after it; `process` maps one
hook event onto it (see ``live.py`` for the mapping and the queue around it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from git_gasp.adapters.lifting import lift
from git_gasp.adapters.payloads import HookEvent
from git_gasp.adapters.records import TOOL_RESULT, TOOL_USE, USER_PROMPT, Record
from git_gasp.adapters.redact import Redactor
from git_gasp.adapters.session_writer import (
    SessionWriter,
    outcome_of,
    redacted_archive,
    run_id_for,
)
from git_gasp.base.files import atomic_write

KEEP_HEAD, KEEP_TAIL = 1000, 3000  # of a tool output kept for the lifting rules


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
        self.gdir = gdir
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
        """Write this session's progress (whole or not at all) under the git dir."""
        data = {"run_id": self.run_id, "cwd": self.cwd, "transcript_path": self.transcript_path,
                "goal": self.goal, "prompts": self.prompts, "emitted": sorted(self.emitted),
                "node_of": self.node_of, "event_of": self.event_of,
                "records": [{"kind": r.kind, "key": r.key, "parent": r.parent,
                             "ts_ms": r.ts_ms, "data": r.data, "line": r.line}
                            for r in self.records]}
        atomic_write(self.path, json.dumps(data, ensure_ascii=False).encode("utf-8"),
                     root=self.gdir.parent, make_parents=True)

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
            atomic_write(root / rel, archive, root=root, make_parents=True)
            st.attach_artifact(self.run_id, kind="transcript", uri=rel,
                               hash="sha256:" + hashlib.sha256(archive).hexdigest(),
                               summary=f"{self.agent} session transcript (redacted)")
            paths.append(rel)
        kinds = [k.split(":", 1)[0] for k in self.emitted]
        outcome = outcome_of(kinds)
        st.finish_run(outcome, run_id=self.run_id,
                      metadata=self._src(None, end_reason=h.reason, recorded_by="hooks"))
        return self.run_id, outcome, paths


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
        from git_gasp.runtime.commit import CommitError

        run_id, outcome, paths = commit
        try:  # the guard's rules apply to this commit too (runtime.commit)
            sha = commit_run(root, run_id, sess.goal, outcome, paths,
                             log_rel=state.store.rel)
        except CommitError as exc:  # recorded, not committed: say why in the hook log
            return f"SessionEnd: {run_id} finished ({outcome}), not committed: {exc}"
        sha = sha.decode() if isinstance(sha, bytes) else str(sha)
        return f"SessionEnd: {run_id} finished ({outcome}), committed {sha[:12]}"
    return f"{h.event}: recorded in {sess.run_id}"
