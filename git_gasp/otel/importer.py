"""OpenTelemetry traces → runs: rung 3 of the adaptation contract (no hooks, no
transcript, but the spans an instrumented agent exports).

Spans are recognised by the GenAI semantic conventions (``gen_ai.operation.name``
invoke_agent / invoke_workflow, chat / text_completion / generate_content,
execute_tool and the memory operations, as ``otel/semconv.py`` lists them for
semantic-conventions-genai v0.1.0, older names read too) and by the
two other conventions instrumentations emit: OpenInference
(``openinference.span.kind`` AGENT / LLM / TOOL, as the OpenAI Agents SDK and
LangChain instrumentations write) and OpenLLMetry (``traceloop.span.kind`` agent /
tool, ``llm.request.type`` chat / completion).

Each top-level agent span (one with no agent span above it) becomes a run, with the
model and tool spans below it as its calls (a sub-agent's calls stay in the outer
run); the calls of a trace outside any agent span make one run for the trace. A span
with status ERROR is a failed call (its message recorded as ``error``); an agent span
with ERROR is a ``failed`` run (one exported while still open is ``abandoned``). Run
ids are ``gasp.run.id`` when the span carries one (a run ``git gasp export otel``
wrote; its goal is kept when this repo has it), else ``run_otel.<trace>[.<span>]``;
call ids likewise (``gasp.node.id``, else a hash of run and span): importing the same
file twice adds nothing. The spans' ids and nanosecond times (and the session,
``gen_ai.conversation.id``) are kept under ``metadata.source`` so an export gives them
back. Every string taken from the spans is redacted before it is stored: texts as
summaries, names and ids (model, provider, tool, agent, service, scope, call and
conversation ids, outcome) by ``Redactor.field``; a ``gasp.*`` id that redaction would
change is not kept (the run or call takes the id derived from its span instead).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from git_gasp.base.errors import GaspError
from git_gasp.base.ids import valid_id
from git_gasp.otel.otlp import STATUS_ERROR, Span
from git_gasp.otel.semconv import (
    AGENT_NAMES,
    AGENT_OPS,
    CONVERSATION_IDS,
    EXECUTE_TOOL,
    INPUT_TOKENS,
    MEMORY_OPS,
    MODEL_NAMES,
    MODEL_OPS,
    OUTPUT_TOKENS,
    PROVIDER_NAMES,
    TOOL_NAMES,
)
from git_gasp.redact.redactor import Redactor, summarize
from git_gasp.runtime.ops import clean, create_node, relate, update_node
from git_gasp.runtime.state import AgentState

FORMAT = "otlp"


def role(span: Span) -> str | None:
    """"agent", "model", "tool" or None (a span no convention names as one of them)."""
    a = span.attrs
    op = a.get("gen_ai.operation.name")
    if op in AGENT_OPS:
        return "agent"
    if op in MODEL_OPS:
        return "model"
    if op == EXECUTE_TOOL or op in MEMORY_OPS:
        return "tool"
    oi = str(a.get("openinference.span.kind") or "").upper()
    if oi in ("AGENT", "LLM", "TOOL"):
        return {"AGENT": "agent", "LLM": "model", "TOOL": "tool"}[oi]
    tl = a.get("traceloop.span.kind")
    if tl in ("agent", "tool"):
        return tl
    if a.get("llm.request.type") in ("chat", "completion"):
        return "model"
    return None


@dataclass
class OtelRun:
    """One run to record: its agent span (None for a trace's loose calls) and calls."""

    run_id: str
    trace_id: str
    root: Span | None
    spans: list[Span]  # every span of the run (for its time range)
    calls: list[tuple[str, Span]] = field(default_factory=list)  # (role, span)


def _first(attrs: dict, *keys: str) -> Any:
    for key in keys:
        value = attrs.get(key)
        if value is not None and value != "":
            return value
    return None


def _top_agent(span: Span, by_id: dict[str, Span], roles: dict[str, str | None]) -> Span | None:
    """The outermost agent span at or above `span` (None when there is none)."""
    found, seen, cur = None, set(), span
    while cur is not None and cur.span_id not in seen:
        seen.add(cur.span_id)
        if roles.get(cur.span_id) == "agent":
            found = cur
        cur = by_id.get(cur.parent_id or "")
    return found


def group_runs(spans: list[Span]) -> tuple[list[OtelRun], int]:
    """The runs in `spans` and how many spans belong to none (no GenAI span in their
    trace)."""
    traces: dict[str, list[Span]] = {}
    seen: set[tuple[str, str]] = set()
    for s in spans:
        if (s.trace_id, s.span_id) not in seen:  # a span exported twice counts once
            seen.add((s.trace_id, s.span_id))
            traces.setdefault(s.trace_id, []).append(s)
    runs: list[OtelRun] = []
    unused = 0
    for tid, members in traces.items():
        by_id = {s.span_id: s for s in members}
        roles = {s.span_id: role(s) for s in members}
        of_root: dict[str, OtelRun] = {}
        loose: OtelRun | None = None
        first = len(runs)
        for s in sorted(members, key=lambda x: (x.start_ns, x.order)):
            r = roles[s.span_id]
            top = _top_agent(s, by_id, roles)
            if top is not None:
                run = of_root.get(top.span_id)
                if run is None:
                    run = of_root[top.span_id] = OtelRun(
                        _run_id(top, f"run_otel.{tid}.{top.span_id}"), tid, top, [])
                    runs.append(run)
            elif r in ("model", "tool"):
                if loose is None:
                    loose = OtelRun(f"run_otel.{tid}", tid, None, [])
                    runs.append(loose)
                run = loose
            else:
                continue
            run.spans.append(s)
            if r in ("model", "tool"):
                run.calls.append((r, s))
        if loose is not None:  # the trace's other spans give its time range and name
            loose.spans = sorted(members, key=lambda x: (x.start_ns, x.order))
        used = {s.span_id for run in runs[first:] for s in run.spans}
        unused += sum(1 for s in members if s.span_id not in used)
    return runs, unused


def _kept_id(r: Redactor, value: Any) -> bool:
    """True when `value` is a GASP id that can be kept as it came: valid, and unchanged
    by redaction (an id holding a secret is replaced by the id derived from the span's
    own ids, which is as stable: the same span always gives the same id)."""
    return valid_id(value) and r.field("gasp_id", value) == value


def _run_id(span: Span, fallback: str) -> str:
    rid = span.attrs.get("gasp.run.id")
    ok = _kept_id(Redactor(), rid) and str(rid).startswith("run")
    return rid if ok else fallback


@dataclass
class RunResult:
    run_id: str
    added: int = 0  # events appended
    already: bool = False
    outcome: str | None = None
    model_calls: int = 0
    tool_calls: int = 0
    failed_calls: int = 0


def _error_of(span: Span) -> str:
    if span.status_message:
        return span.status_message
    for event in span.events:
        if event["name"] == "exception":
            msg = _first(event["attrs"], "exception.message", "exception.type")
            if msg is not None:
                return str(msg)
    return str(span.attrs.get("error.type") or "error")


def _usage(attrs: dict) -> dict | None:
    inp = _first(attrs, *INPUT_TOKENS)
    out = _first(attrs, *OUTPUT_TOKENS)
    usage = {k: v for k, v in (("input_tokens", inp), ("output_tokens", out))
             if type(v) is int and 0 <= v < 2**63}
    return usage or None


def _after(name: str, prefix: str) -> str | None:
    return name[len(prefix):] or None if name.startswith(prefix) else None


def _model_of(name: str) -> str | None:
    """The model a model span's name gives (``{operation} {model}``)."""
    return next((m for op in sorted(MODEL_OPS) if (m := _after(name, op + " "))), None)


def _tool_of(span: Span) -> str | None:
    """The tool a tool span's name gives (``execute_tool {tool}``); a memory operation
    is a tool call named by its operation."""
    op = span.attrs.get("gen_ai.operation.name")
    if op in MEMORY_OPS:
        return str(op)
    return _after(span.name, EXECUTE_TOOL + " ")


class OtelWriter:
    """Records `OtelRun`s into an open AgentState."""

    def __init__(self, state: AgentState) -> None:
        self.state = state
        self.r = Redactor()

    def _text(self, value: Any) -> str:
        """A redacted summary of span content (empty for none)."""
        if value is None or value == "":
            return ""
        return self.r.text(_str(summarize(value)))

    def _name(self, key: str, value: Any) -> str:
        """A name or id from the spans (a model, tool, agent, service, scope, call id…) as
        text the log can hold, redacted as field `key` (``Redactor.field``)."""
        return self.r.field(key, _str(value))

    def _source(self, span: Span | None, trace: str, start: int, end: int) -> dict:
        src: dict[str, Any] = {"format": FORMAT, "trace_id": trace}
        if span is not None:
            src["span_id"] = span.span_id
            if span.scope:
                src["scope"] = self._name("scope", span.scope)
            conversation = _first(span.attrs, *CONVERSATION_IDS)
            if isinstance(conversation, str):
                src["conversation_id"] = self._name("conversation_id", conversation)
        src["start_ns"], src["end_ns"] = start, end
        return src

    def write(self, run: OtelRun) -> RunResult:
        """Record `run` (nothing when its run id is in the graph already). Everything is
        worked out before the first write, so bad span content never leaves a run open."""
        st = self.state
        result = RunResult(run.run_id)
        if st.graph.has_node(run.run_id):
            result.already = True
            return result
        if st.run is not None:
            raise GaspError(f"run {st.run.run_id} is still open in this repo; finish it "
                            "(`git gasp run finish`) before importing")
        before = st.store.line_count
        root = run.root
        start = min(s.start_ns for s in run.spans)
        end = max(max(s.end_ns, s.start_ns) for s in run.spans)
        if root is not None:
            start, end = root.start_ns, max(root.end_ns, root.start_ns)
        first = root or run.spans[0]
        attrs = root.attrs if root is not None else {}
        agent = next((name for s in ([root] if root else []) + run.spans
                      if role(s) == "agent"
                      and (name := _first(s.attrs, *AGENT_NAMES)) is not None), None)
        task = self._text(_first(attrs, "gasp.run.task") or agent or first.name)
        meta: dict[str, Any] = {"source": self._source(root, run.trace_id, start, end)}
        conversation = next((c for s in run.spans
                             if isinstance(c := _first(s.attrs, *CONVERSATION_IDS), str)), None)
        if conversation is not None and "conversation_id" not in meta["source"]:
            # the session on a call's span (inference spans carry it), not the agent's
            meta["source"]["conversation_id"] = self._name("conversation_id", conversation)
        service = first.resource.get("service.name")
        if isinstance(service, str) and service:
            meta["source"]["service"] = self._name("service", service)
        if agent:
            meta["agent_name"] = self._name("agent_name", agent)
        goal = attrs.get("gasp.goal.id")  # kept when that goal is in this repo too
        node = st.graph.node(goal) if isinstance(goal, str) else None
        taken: set[str] = set()
        calls = [self._prepare(kind, span, run.run_id, run.trace_id, taken)
                 for kind, span in sorted(run.calls, key=lambda c: (c[1].start_ns, c[1].order))]
        outcome = attrs.get("gasp.run.outcome")
        if not (isinstance(outcome, str) and outcome and "\n" not in outcome):
            if root is not None and root.status_code == STATUS_ERROR:
                outcome = "failed"
            elif attrs.get("gasp.status") == "running":  # exported while still open
                outcome = "abandoned"
            else:
                outcome = "completed"
        outcome = self._name("outcome", outcome)
        fmeta: dict[str, Any] = {}
        if root is not None and root.status_code == STATUS_ERROR:
            fmeta["error"] = self._text(_error_of(root))
        st.start_run(task or f"trace {run.trace_id}", run_id=run.run_id,
                     goal=goal if node is not None and node["kind"] == "goal" else None,
                     metadata=meta)
        for call in calls:
            self._emit(call)
            result.model_calls += call.what == "model"
            result.tool_calls += call.what == "tool"
            result.failed_calls += call.failed
        st.finish_run(outcome, metadata=fmeta)
        result.outcome = outcome
        result.added = st.store.line_count - before
        return result

    def _call_id(self, kind: str, span: Span, run_id: str, taken: set[str]) -> str:
        prefix = "model_call" if kind == "model" else "tool_call"
        nid = span.attrs.get("gasp.node.id")
        if not (_kept_id(self.r, nid) and str(nid).startswith(prefix + "_") and nid not in taken
                and not self.state.graph.has_node(nid)):
            nid = f"{prefix}_" + hashlib.sha256(
                f"{run_id}:{span.span_id}".encode()).hexdigest()[:24]
        taken.add(nid)
        return nid

    def _prepare(self, kind: str, span: Span, run_id: str, trace: str,
                 taken: set[str]) -> _Call:
        """The events of one call: .called, and .finished unless it was still running."""
        a = span.attrs
        nid = self._call_id(kind, span, run_id, taken)
        end = max(span.end_ns, span.start_ns)
        meta: dict[str, Any] = {"source": self._source(span, trace, span.start_ns, end)}
        inp = self._text(_first(a, "gasp.input_summary", "gen_ai.tool.call.arguments",
                                "input.value", "traceloop.entity.input"))
        out = self._text(_first(a, "gasp.output_summary", "gen_ai.tool.call.result",
                                "output.value", "traceloop.entity.output"))
        if kind == "model":
            model = self._name("model", _first(a, *MODEL_NAMES) or _model_of(span.name)
                               or span.name or "unknown")
            provider = _first(a, *PROVIDER_NAMES)
            fields = {"model": model,
                      "provider": self._name("provider", provider) if provider else None}
        else:
            tool = self._name("tool", _first(a, *TOOL_NAMES) or _tool_of(span)
                              or span.name or "unknown")
            call_id = a.get("gen_ai.tool.call.id")
            if isinstance(call_id, str) and call_id and call_id != nid:
                meta["tool_call_id"] = self._name("tool_call_id", call_id)
            fields = {"tool": tool}
        what = "model" if kind == "model" else "tool"
        payload = clean({"id": nid, "run_id": run_id, **fields, "input_summary": inp})
        payload["metadata"] = meta
        props = clean({**fields, "input_summary": inp or None, "run_id": run_id,
                       "status": "running", "started_ts_ms": span.start_ms, "metadata": meta})
        call = _Call(what, nid, payload, [create_node(nid, f"{what}_call", props),
                                          relate(nid, "produced_by", run_id)])
        if a.get("gasp.status") == "running":
            return call
        call.failed = span.status_code == STATUS_ERROR or a.get("gasp.status") == "failed"
        error = self._text(_error_of(span)) if call.failed else None
        extra = {"error": error, "duration_ms": (end - span.start_ns) // 1_000_000,
                 "usage": _usage(a) if kind == "model" else None}
        call.finished = clean({"id": nid, "run_id": run_id, "output_summary": out,
                               "success": not call.failed, **extra})
        call.finished["metadata"] = {}
        call.finished_ops = [update_node(nid, clean({
            "status": "failed" if call.failed else "succeeded", "success": not call.failed,
            "output_summary": out or None, "finished_ts_ms": end // 1_000_000, **extra}))]
        return call

    def _emit(self, call: _Call) -> None:
        st = self.state
        called = st.emit(f"{call.what}.called", call.payload, call.ops)
        if call.finished is not None:
            st.emit(f"{call.what}.finished", call.finished, call.finished_ops,
                    cause=called.id, links=(call.node_id,))


@dataclass
class _Call:
    """One call's events, worked out before anything is written."""

    what: str  # "model" or "tool"
    node_id: str
    payload: dict
    ops: list
    finished: dict | None = None
    finished_ops: list = field(default_factory=list)
    failed: bool = False


def _str(value: Any) -> str:
    """`value` as text the log can hold (a lone surrogate from the JSON replaced)."""
    return str(value).encode("utf-8", "replace").decode("utf-8")
