"""The per-step event writer shared by the transcript importer and the live hooks.

`SessionWriter` records one agent session's steps (tool calls and results, their
observations, lifted items) into an open AgentState with stable node ids, so the
same step recorded twice, or by both the hooks and a later import, adds nothing.
Also here: the run id of a session (`run_id_for`), the redacted transcript archive
(`redacted_archive`) and a run's outcome from what was lifted in it (`outcome_of`).
"""

from __future__ import annotations

import gzip
import json
from hashlib import sha256
from pathlib import Path
from typing import Any

from git_gasp.adapters.lifting import Lifted
from git_gasp.adapters.records import Record
from git_gasp.base import git
from git_gasp.base.outside import valid_text
from git_gasp.redact import capture
from git_gasp.redact.paths import LocalPaths, LocalRedactor
from git_gasp.redact.redactor import Redactor
from git_gasp.runtime.state import _AUTO, AgentState, _clean, create_node, relate, update_node
from git_gasp.runtime.transitions import EVAL_STATUSES, TransitionError, canonical

# the vendor of the models each agent calls (models.dev's provider ids): a model
# call's ``provider``, so `export agent-trace` names ``anthropic/claude-…``
PROVIDERS = {"claude-code": "anthropic", "codex": "openai", "gemini": "google",
             "qwen-code": "alibaba"}
# what records a live session (a run's ``metadata.recorded_by``): its hooks, the proxy
LIVE_RECORDERS = ("hooks", "proxy")


def run_id_for(agent: str, session_id: str) -> str:
    """``run_<agent>.<session id>``, the id's characters outside an id's ASCII set as -."""
    safe = "".join(c if c.isascii() and (c.isalnum() or c in "-.") else "-"
                   for c in session_id[:150])
    return f"run_{agent}.{safe}"


def redacted_archive(raw: bytes, redactor: Redactor) -> bytes:
    """The transcript with every line redacted, gzip-compressed reproducibly (mtime 0)."""
    out = []
    for line in raw.split(b"\n"):
        if not line.strip():
            continue
        try:
            out.append(json.dumps(redactor.value(json.loads(line)), ensure_ascii=False))
        except (ValueError, RecursionError):
            out.append(redactor.text(line.decode("utf-8", "replace")))
    text = valid_text("\n".join(out) + "\n")  # a line may hold a lone surrogate escape
    return gzip.compress(text.encode(), mtime=0)



def _full_commit(cwd: str, short: str | None) -> str | None:
    if not short:
        return short
    return git.resolve_commit(cwd, short) or short


class SessionWriter:
    """Records one agent session's steps into an open AgentState, one record at a time.

    Shared by the transcript projector (:class:`Projector`) and the live hook handler
    (``live.py``), so both write the same events with the same ids for the same step:
    every node is ``<kind>_<sha256(run id:record or item key)>`` (:meth:`stable_id`), and
    a node already in the graph is not created again, so recording a step twice (a hook
    entry replayed after a crash) adds nothing.
    """

    def __init__(self, state: AgentState, agent: str, session_id: str | None, run_id: str, *,
                 cwd: str | None = None, home: str | None = None) -> None:
        self.state = state
        self.agent = agent
        self.session_id = session_id
        self.run_id = run_id
        self.cwd = cwd
        root = getattr(state, "root", None)
        self.capture = capture.load(root) if root is not None else capture.Capture()
        self.paths = LocalPaths.for_session(cwd, home,
                                            absolute=self.capture.paths == "absolute")
        self.r = LocalRedactor(self.paths)  # every stored string: redacted, paths local
        self.event_of: dict[str, str] = {}  # record key -> event id that recorded it
        self.node_of: dict[str, str] = {}  # record or lifted key -> node id

    def _src(self, key: str | None = None, **extra: Any) -> dict:
        src = {"agent": self.agent, "session_id": self.session_id}
        if key:
            src["key"] = key
        return {"source": src, **extra}

    def _emit(self, kind: str, payload: dict, ops: list, cause: str | None) -> str:
        return self.state.emit(kind, payload, ops, cause=cause if cause else _AUTO).id

    def stable_id(self, prefix: str, key: str) -> str:
        """The node id of `key` in this run: the same every time the step is recorded."""
        return f"{prefix}_" + sha256(f"{self.run_id}:{key}".encode()).hexdigest()[:24]

    def tool_call_id(self, key: str) -> str:
        return self.stable_id("tool_call", key)

    def node_for(self, key: str | None) -> str | None:
        """The node that recorded record or lifted item `key` in this run, or None.

        Looked up in `node_of` first, else derived from the key (every id is stable) and
        confirmed in the graph, so a writer resumed in a later hook process needs no map
        of everything recorded before it."""
        if not key:
            return None
        if key in self.node_of:
            return self.node_of[key]
        prefix = key.split(":", 1)[0]
        if prefix in ("goal", "task", "eval", "failure", "patch"):
            nid = self.stable_id(prefix, key)
        elif prefix == "result":
            nid = self.stable_id("observation", key)
        elif prefix == "decision":
            return None
        else:
            nid = self.tool_call_id(key)
        return nid if self.state.graph.has_node(nid) else None

    def _create(self, kind: str, node_kind: str, payload: dict, props: dict, rels: list,
                links: tuple[str | None, ...], cause: Any) -> str:
        """`kind` + the ops pair creating ``payload["id"]`` (as the AgentState record_*
        helpers write it), unless that node is in the graph already."""
        st = self.state
        if not st.graph.has_node(payload["id"]):
            st._entity(kind, node_kind, payload, props, rels, links, cause)
        return payload["id"]

    def observation(self, key: str, summary: str, about: str, metadata: dict,
                    cause: Any) -> str:
        """observation.created of `about` with the stable id of `key`."""
        oid = self.stable_id("observation", key)
        payload = _clean({"id": oid, "summary": summary, "source": self.agent})
        payload["metadata"] = metadata
        props = {"summary": summary, "source": self.agent, "metadata": metadata}
        return self._create("observation.created", "observation", payload, props,
                            [relate(oid, "observes", about)], (about,), cause)

    def model_call(self, rec: Record, text: str, cause: str | None,
                   default_model: str | None = None, started: int | None = None) -> str:
        """model.called + model.finished for a ``model_response`` record (`text`: what
        the model wrote in it; `started`: when the turn began, the time of the record it
        answers, where known); return the model.called event id. Nothing when recorded
        already."""
        mid = self.stable_id("model_call", rec.key)
        if self.state.graph.has_node(mid):  # recorded already (by the hooks, or a replay)
            called = self.state.creator_of(mid) or ""
        else:
            self.model_called(rec.key, rec.get("model") or default_model, cause=cause,
                              started=started if started is not None else rec.ts_ms)
            called = self.state.creator_of(mid) or ""
            self.model_finished(mid, text, usage=rec.get("usage"),
                                stop_reason=rec.get("stop_reason"), at=rec.ts_ms)
        self.event_of[rec.key] = called
        self.node_of[rec.key] = mid
        return called

    def model_called(self, key: str, model: str | None, *, cause: str | None = None,
                     started: int | None = None, input_text: str = "",
                     provider: str | None = None, metadata: dict | None = None) -> bool:
        """model.called (running) for the model call of record `key`, with its stable id
        (`model_call_id`), unless it is recorded already (a replay); True if new.

        The one writer of an adapter's model call: the transcript's turns
        (`model_call`), an agent's model hooks (``dialects/models.py``) and the proxy
        (``proxy/recorder.py``). `model` and `input_text` are redacted and bounded;
        `provider` defaults to the agent's model vendor (`PROVIDERS`)."""
        mid = self.model_call_id(key)
        if self.state.graph.has_node(mid):
            return False
        meta = self._src(key, **(metadata or {}))
        said = self.kept(input_text, "input_summary", meta, chars=capture.SUMMARY_CHARS)
        self.state.record_model_call(
            self.r.field("model", str(model or "unknown")),
            provider=provider or PROVIDERS.get(self.agent), input_summary=said,
            metadata=meta, call_id=mid, cause=cause or _AUTO, started_ts_ms=started)
        return True

    def model_finished(self, mid: str, text: str, *, usage: dict | None = None,
                       stop_reason: str | None = None, at: int | None = None,
                       duration_ms: int | None = None, error: str | None = None,
                       metadata: dict | None = None) -> bool:
        """model.finished of the running model call `mid` (`text`: what the model wrote,
        redacted and bounded as ``output_summary``; `at`: when it ended, default now;
        `error` marks it failed); False when it is not running (finished already)."""
        st = self.state
        node = st.graph.node(mid)
        if node is None or node["props"].get("status") != "running":
            return False
        meta = dict(metadata or {})
        out = self.kept(text, "output_summary", meta, chars=capture.SUMMARY_CHARS)
        st.finish_model_call(
            mid, output_summary=out, success=error is None,
            error=self.r.text(error) if error else None,
            usage=self.r.value(usage) if isinstance(usage, dict) else None,
            stop_reason=self.r.field("stop_reason", str(stop_reason))
            if stop_reason else None, duration_ms=duration_ms, finished_ts_ms=at,
            metadata=meta, cause=st.creator_of(mid) or _AUTO)
        return True

    def model_call_id(self, key: str) -> str:
        """The node id of the model call of record `key` in this run."""
        return self.stable_id("model_call", key)

    def models(self) -> list[str]:
        """The models this run has called, in order of first use (from its node)."""
        run = self.state.graph.node(self.run_id)
        return list((run["props"].get("models") or []) if run else [])

    def kept(self, text: str, field: str, meta: dict, chars: int | None = None) -> str:
        """`text` from the session as stored under `field`: redacted, then cut to `chars`
        and `field_limit` (a cut noted in ``meta["cut"]``)."""
        cut: dict = {}
        out = self.capture.bound(self.r.text(text), cut, field, chars=chars)
        if cut:
            meta.setdefault("cut", {}).update(cut)
        return out

    def tool_called(self, rec: Record, cause: str | None) -> str:
        """tool.called + the tool_call node for a ``tool_use`` record; return the event id."""
        tid = self.tool_call_id(rec.key)
        if self.state.graph.has_node(tid):  # recorded already (a replayed hook entry)
            self.node_of[rec.key] = tid
            event = self.state.creator_of(tid)
            if event:
                self.event_of[rec.key] = event
            return event
        name = str(rec.get("name"))
        cut: dict = {}
        inp = self.capture.tool_input(name, self.r.value(rec.get("input")), cut)
        meta = self._src(rec.key, **({"cut": cut} if cut else {}))
        payload = {"id": tid, "run_id": self.run_id, "tool": name,
                   "input_summary": inp, "metadata": meta}
        props = {"tool": name, "input_summary": inp or None, "run_id": self.run_id,
                 "status": "running", "metadata": meta}
        self.event_of[rec.key] = self._emit("tool.called", payload, [
            create_node(tid, "tool_call", props),
            relate(tid, "produced_by", self.run_id)], cause)
        self.node_of[rec.key] = tid
        return self.event_of[rec.key]

    def tool_finished(self, rec: Record, cause: str | None) -> str | None:
        """tool.finished + an observation of the call for a ``tool_result`` record (None
        when its call is unknown)."""
        st = self.state
        tid = self.node_for(rec.parent)
        if tid is None:
            return None  # a result whose call is not in this session
        ok = not rec.get("is_error")
        call = st.graph.node(tid)
        tool = str(call["props"].get("tool") or "tool") if call is not None else "tool"
        cut: dict = {}
        raw = self.r.text(str(rec.get("output") or ""))
        nbytes = int(rec.get("bytes") or len(raw.encode("utf-8", "surrogatepass")))
        text = self.capture.file_output(tool, raw)
        out = self.capture.output(text, cut)
        fmeta = {"exit_code": rec.get("exit_code"), "is_error": bool(rec.get("is_error"))}
        if cut:
            fmeta["cut"] = cut
        oid = self.stable_id("observation", rec.key)
        if st.graph.has_node(oid):  # recorded already (a replayed hook entry)
            finished = st.creator_of(oid) or ""
        elif call is not None and call["props"].get("status") != "running":
            finished = st.creator_of(tid) or ""  # finished, but its observation is missing
        else:
            finished = self._emit("tool.finished", {
                "id": tid, "run_id": self.run_id, "output_summary": out, "success": ok,
                "metadata": fmeta}, [update_node(tid, {
                    "status": "succeeded" if ok else "failed", "success": ok,
                    "output_summary": out or None, "outcome_metadata": fmeta})], cause)
        line = capture.summary_line(tool, ok, rec.get("exit_code"), text, nbytes,
                            show_text=self.capture.tool_output != "none")
        detail = {"tool": tool, "success": ok, "exit_code": rec.get("exit_code"),
                  "bytes": nbytes, "output": out}
        response = self.capture.response(tool, self.r.value(rec.get("response")))
        if response is not None:
            detail["response"] = response
        obs = self.observation(rec.key, line, tid, self._src(rec.key, detail=detail),
                               finished or None)
        self.event_of[rec.key] = finished
        self.node_of[rec.key] = obs
        return finished

    def lifted(self, item: Lifted, rec_key: str, goal: str | None) -> None:
        """Record one lifted item (not goals: the caller records those)."""
        st = self.state
        d = item.data
        meta = self._src(rec_key, **item.metadata)
        cause = self.event_of.get(rec_key)
        if item.kind == "goal":
            return  # recorded by the caller, before or with the run
        nid = self.stable_id(item.kind, item.key)
        if item.kind == "task":
            title = self.kept(d["title"], "title", meta)
            payload = _clean({"id": nid, "title": title, "status": "Open", "goal_id": goal,
                              "metadata": meta})
            node = self._create("task.created", "task", payload,
                                {"title": title, "status": "Open", "goal_id": goal,
                                 "metadata": meta},
                                [relate(nid, "serves", goal)] if goal else [], (goal,),
                                _AUTO)
        elif item.kind == "eval":
            validates = self.node_for(d.get("validates"))
            if validates:
                meta["validated_by_rule"] = "eval-validates-patch"
            cut: dict = {}
            tail = self.capture.output(self.r.text(d["output_tail"]), cut, "output_tail")
            meta.update(tool_use_id=d["tool_use_id"], output_tail=tail)
            command = self.kept(d["command"], "command", meta)
            if cut:
                meta.setdefault("cut", {}).update(cut)
            status = canonical(d["status"], EVAL_STATUSES, "eval status")
            node = self._create("eval.finished", "eval", {
                "id": nid, "command": command, "status": status, "score": d["score"],
                "metadata": meta}, {"command": command, "status": status, "score": d["score"],
                                    "metadata": meta},
                [relate(validates, "validated_by", nid)] if validates else [], (validates,),
                cause)
        elif item.kind == "failure":
            obs = self.node_for(rec_key)
            text = d["summary"]
            if self.capture.tool_output == "none" and "` failed" in text:
                text = text[:text.index("` failed") + len("` failed")]  # not the output's tail
            summary = self.kept(text, "summary", meta)
            ev = self.node_for(d["eval"])
            fmeta = dict(meta, eval=ev)
            node = self._create("failure.observed", "failure", {
                "id": nid, "summary": summary, "status": "Open", "metadata": fmeta},
                {"summary": summary, "status": "Open", "metadata": fmeta},
                [relate(nid, "derived_from", obs)] if obs else [], (obs,),
                st.creator_of(ev) if ev else cause)
        elif item.kind == "patch":
            pid = nid
            if st.graph.has_node(pid):  # recorded already (a replayed hook entry)
                self.node_of[item.key] = pid
                return
            commit = _full_commit(self.cwd, d.get("commit")) if (
                self.cwd and Path(self.cwd).is_dir()) else d.get("commit")
            title = self.kept(d["title"], "title", meta)
            files = [self.kept(f, "files", meta) for f in d["files"]]
            meta.update(files=files)
            payload = {"id": pid, "title": title, "status": "Proposed",
                       "created_by": {"kind": st.actor[0], "id": st.actor[1]},
                       "references_commit": commit, "metadata": meta}
            props = {"title": title, "status": "Proposed", "references_commit": commit,
                     "metadata": meta}
            ops = [create_node(pid, "patch", {k: v for k, v in props.items() if v is not None})]
            ops += [relate(pid, "advances", goal)] if goal else []
            ops += [relate(pid, "addresses", fid) for f in d["addresses"]
                    if (fid := self.node_for(f)) is not None]
            validator = self.node_for(d.get("validated_by"))
            if validator:
                ops.append(relate(pid, "validated_by", validator, {
                    "lifted_by": "eval-validates-patch"}))
            ops.append(relate(pid, "produced_by", self.run_id))
            self._emit("patch.proposed", payload, ops, cause)
            if commit:
                st.attach_artifact(pid, kind="git_commit", uri=f"git:{commit}", hash=commit,
                                   summary=title)
            node = pid
        elif item.kind == "decision":
            patch = self.node_for(d["patch"])
            if patch is None:
                return  # its patch is not in this run (nothing to decide on)
            ev = self.node_for(d["eval"])
            done = self._decision_of(patch)
            node = done or st.record_decision("Approved", self.kept(d["reason"], "reason", meta),
                                              patch=patch,
                                      metadata=dict(meta, eval=ev),
                                      cause=st.creator_of(ev) if ev else cause)
        elif item.kind == "status":
            self._status(item)
            return
        else:  # pragma: no cover - lift() makes only the kinds above
            return
        self.node_of[item.key] = node

    def _status(self, item: Lifted) -> None:
        """`<kind>.status_changed` + its UpdateNode for a lifted ``status`` item; nothing
        when its node is not in this run, is in that status already (a replayed entry),
        or cannot move there (a status a person set is left alone)."""
        target = self.node_for(item.data["of"])
        node = self.state.graph.node(target) if target else None
        if node is None or node["props"].get("status") == item.data["status"]:
            return
        try:
            self.state.update_status(target, item.data["status"],
                                     reason=self.r.text(item.data["reason"]))
        except TransitionError:
            pass

    def _decision_of(self, patch: str) -> str | None:
        """The decision that promoted `patch` already (a replayed hook entry), or None."""
        node = self.state.graph.node(patch)
        if node is None or node["props"].get("status") != "Promoted":
            return None
        return next((r["to"] for r in self.state.graph.relations
                     if r["from"] == patch and r["rel"] == "approved_by"), None)


def outcome_of(lifted_kinds: Any) -> str:
    """A run's outcome from the kinds lifted in it: promoted, patched or completed."""
    kinds = set(lifted_kinds)
    return "promoted" if "decision" in kinds else "patched" if "patch" in kinds else "completed"
