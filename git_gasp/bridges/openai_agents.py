"""The OpenAI Agents SDK onto the sink: a tracing processor.

    from git_gasp.bridges.openai_agents import GaspTracingProcessor, StateSink
    with StateSink.open("my-agent") as sink:
        agents.add_trace_processor(GaspTracingProcessor(sink))

A trace (one `Runner.run`, or a `with trace(...)` around several) is a run, finished
"failed" when an agent, task or turn span ended with an error or a guardrail's
tripwire triggered; a span whose trace never started (a trace reattached on resume)
opens the run itself and its end closes it. Generation spans are model calls (model,
provider host, usage); response spans too, recorded when they end (the model is known
only then); function spans are tool calls, failed when the span has an error; a
handoff is a `handoff` tool call; a guardrail an eval (Failed when its tripwire
triggered). Calls are keyed by span id. Every text is redacted before it reaches the
sink. Needs the extra: pip install 'git-gasp[openai-agents]'.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from git_gasp.bridges.common import (
    RunScope,
    error_text,
    guarded,
    metadata_of,
    missing_extra,
    name,
    summary,
)
from git_gasp.runtime.sink import AgentSink, StateSink

try:
    from agents.tracing import TracingProcessor
except ImportError as _exc:  # the extra is not installed
    raise missing_extra(__name__, "openai-agents", "openai-agents", _exc) from None

# spans whose error is the run's: the run (task), an agent, a turn (a guardrail's
# tripwire), and a guardrail that triggered
_RUN_SPANS = ("agent", "task", "turn", "guardrail")

__all__ = ["GaspTracingProcessor", "StateSink"]  # StateSink too: one import line


class GaspTracingProcessor(TracingProcessor):
    """Records an OpenAI Agents SDK workflow's runs, model calls and tool calls into an
    AgentSink. Register it with `agents.add_trace_processor(...)` (beside the default
    exporter) or `agents.set_trace_processors([...])` (instead of it).

    `task` names the runs (default: the trace's workflow name); `goal` (a goal id or
    the title of a new goal) is what they serve. When the sink already has a run open
    (you started it), calls record into that run and it stays open. `errors` counts
    failures inside the processor itself (logged, never raised).
    """

    def __init__(self, sink: AgentSink, *, task: str | None = None,
                 goal: str | None = None) -> None:
        self.sink = sink
        self.errors = 0
        self._scope = RunScope(sink, task=task, goal=goal)
        self._lock = self._scope.lock
        self._traces: dict[str, dict] = {}  # trace id -> what the run's finish records
        self._calls: dict[str, tuple[str, str | None]] = {}  # span id -> (kind, call id)

    # --- traces: runs ----------------------------------------------------------------------
    @guarded
    def on_trace_start(self, trace: Any) -> None:
        meta = {"trace_id": trace.trace_id, "workflow": trace.name}
        if getattr(trace, "group_id", None):
            meta["group_id"] = trace.group_id
        if getattr(trace, "metadata", None):
            meta["trace_metadata"] = trace.metadata
        with self._lock:
            self._traces[trace.trace_id] = {"agents": [], "error": None}
            self._scope.enter(trace.trace_id, trace.name or "Agent workflow", meta)

    @guarded
    def on_trace_end(self, trace: Any) -> None:
        with self._lock:
            self._finish(trace.trace_id, trace.trace_id)

    def _finish(self, key: str, trace_id: str) -> None:
        info = self._traces.pop(trace_id, None) or {"agents": [], "error": None}
        agents = {"agents": info["agents"]} if info["agents"] else None
        # openai-agents 0.2 marks no span of the run when a model call raises: the run
        # then ends on its failed last model call
        error = info["error"] or info.get("model_error")
        self._scope.leave(key, error=error, metadata=agents)

    # --- spans ---------------------------------------------------------------------------
    @guarded
    def on_span_start(self, span: Any) -> None:
        data = span.span_data
        kind = getattr(data, "type", None)
        with self._lock:
            if span.trace_id not in self._traces:  # its trace never started: a resumed run
                if span.parent_id is not None:
                    return
                self._traces[span.trace_id] = {"agents": [], "error": None, "root": span.span_id}
                task = getattr(data, "name", None) if kind == "agent" else None
                self._scope.enter(span.span_id, task or "Agent workflow",
                                  {"trace_id": span.trace_id})
            meta = {"span_id": span.span_id, "trace_id": span.trace_id}
            if kind == "generation":
                self._calls[span.span_id] = ("model", self.sink.on_model_called(
                    name("model", data.model) or "unknown",
                    provider=name("provider", _provider(data.model_config)),
                    input_summary=_messages(data.input), metadata=metadata_of(meta)))
            elif kind == "function":
                if getattr(data, "mcp_data", None):
                    meta["mcp"] = data.mcp_data
                self._calls[span.span_id] = ("tool", self.sink.on_tool_called(
                    name("tool", data.name) or "tool", input_summary=summary(data.input),
                    metadata=metadata_of(meta)))
            elif kind == "handoff":
                self._calls[span.span_id] = ("tool", self.sink.on_tool_called(
                    "handoff", input_summary=summary(f"from {data.from_agent}"),
                    metadata=metadata_of(meta)))

    @guarded
    def on_span_end(self, span: Any) -> None:
        data = span.span_data
        kind = getattr(data, "type", None)
        error = _span_error(span)
        with self._lock:
            info = self._traces.get(span.trace_id)
            started = span.span_id in self._calls
            if kind == "generation" and started:
                self.sink.on_model_finished(
                    self._call(span), output_summary=_messages(data.output, last=False),
                    error=error, usage=metadata_of(data.usage),
                    metadata=_input(data.input, _messages))
            elif kind == "response" and info is not None:
                self._response(span, error)
            elif kind in ("function", "handoff") and started:
                cid = self._call(span)
                if kind == "function":
                    out, meta = summary(data.output), _input(data.input, summary)
                else:
                    out, meta = summary(f"to {data.to_agent}"), None
                self.sink.on_tool_finished(cid, output_summary=out, error=error, metadata=meta)
            elif kind == "guardrail" and info is not None:
                guard = name("guardrail", data.name) or "guardrail"
                self.sink.on_eval(f"guardrail {guard}",
                                  "Failed" if data.triggered else "Passed",
                                  metadata=metadata_of({"span_id": span.span_id,
                                                        "triggered": bool(data.triggered)}))
                if data.triggered:  # a tripwire ends the run with an exception
                    error = error or f"guardrail {guard} tripwire triggered"
            elif kind == "agent" and info is not None and data.name not in info["agents"]:
                info["agents"].append(data.name)
            if kind in ("generation", "response") and info is not None:
                info["model_error"] = error  # the last model call's: a retry clears it
            if error is not None and kind in _RUN_SPANS and info is not None:
                info["error"] = info["error"] or error
            if info is not None and info.get("root") == span.span_id:
                self._finish(span.span_id, span.trace_id)

    def _call(self, span: Any) -> str | None:
        return self._calls.pop(span.span_id, ("", None))[1]

    def _response(self, span: Any, error: str | None) -> None:
        """A response span as one model call (its model is known only at its end)."""
        data = span.span_data
        response = getattr(data, "response", None)
        model = name("model", getattr(response, "model", None)) or "unknown"
        usage = data.usage
        if usage is None and getattr(response, "usage", None) is not None:
            usage = response.usage.model_dump(exclude_none=True)
        cid = self.sink.on_model_called(
            model, provider="openai", input_summary=_messages(getattr(data, "input", None)),
            metadata=metadata_of({"span_id": span.span_id, "trace_id": span.trace_id,
                                  "response_id": getattr(response, "id", None)}))
        output = summary(_item_text(response)) if response is not None else ""
        self.sink.on_model_finished(cid, output_summary=output, error=error,
                                    usage=metadata_of(usage))

    # --- lifecycle -------------------------------------------------------------------------
    @guarded
    def shutdown(self) -> None:
        """The SDK is shutting down: calls and runs still open end as abandoned."""
        with self._lock:
            for kind, cid in list(self._calls.values()):
                if cid is not None and kind == "model":
                    self.sink.on_model_finished(cid, error="shut down before the call ended")
                elif cid is not None:
                    self.sink.on_tool_finished(cid, error="shut down before the call ended")
            self._calls.clear()
            self._traces.clear()
            self._scope.abandon("the tracing provider shut down before the trace ended")

    def force_flush(self) -> None:
        """Nothing is queued: every event is appended durably when it happens."""


# --- what the SDK hands over, as text ----------------------------------------------------
def _span_error(span: Any) -> str | None:
    err = getattr(span, "error", None)
    if not err:
        return None
    message = err.get("message") if isinstance(err, dict) else str(err)
    detail = (err.get("data") or {}).get("error") if isinstance(err, dict) else None
    return error_text(f"{message}: {detail}" if detail else message)


def _provider(model_config: Any) -> str | None:
    """The host a model call went to (its model_config's base_url), when known."""
    base = model_config.get("base_url") if isinstance(model_config, Mapping) else None
    return (urlsplit(str(base)).hostname or None) if base else None


def _input(value: Any, shape: Any) -> dict | None:
    """The input a span learned only at its end, for the finish's metadata."""
    text = shape(value) if value else ""
    return {"input": text} if text else None


def _messages(items: Any, *, last: bool = True) -> str:
    """Chat messages or Responses items as text: the last one's role and text (`last`),
    or every item's text."""
    if isinstance(items, str):
        return summary(items)
    if not items:
        return ""
    items = list(items)
    if not last:
        return summary("\n".join(filter(None, map(_item_text, items))))
    text = _item_text(items[-1])
    role = _get(items[-1], "role")
    return summary(f"{role}: {text}" if role and text else text)


def _get(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, Mapping) else getattr(item, key, None)


def _item_text(item: Any) -> str:
    """A message's or output item's text; a function call as `name(arguments)`; a whole
    response (a generation span's output) as its items' text."""
    output = _get(item, "output")
    if isinstance(output, list):
        return "\n".join(filter(None, map(_item_text, output)))
    if _get(item, "type") == "function_call":
        return f"{_get(item, 'name')}({_get(item, 'arguments') or ''})"
    calls = _get(item, "tool_calls")
    if calls:
        names = [_get(_get(c, "function") or {}, "name") for c in calls]
        return "tool calls: " + ", ".join(map(str, names))
    content = _get(item, "content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(t for t in (_get(b, "text") for b in content) if isinstance(t, str))
    return ""
