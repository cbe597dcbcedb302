"""Runs as OpenTelemetry traces: the folded graph's runs and calls as OTLP/JSON spans.

One line per run, an ``ExportTraceServiceRequest`` as the Collector's file exporter
writes it (see ``otel/otlp.py``), its spans following the GenAI semantic conventions
as of semantic-conventions-genai v0.1.0 (``otel/semconv.py``: what changed since
semantic-conventions 1.41.1, and why ``OTEL_SEMCONV_STABILITY_OPT_IN`` changes nothing
here):

- the run → ``invoke_agent <agent>`` (INTERNAL; ``gen_ai.operation.name`` invoke_agent,
  ``gen_ai.agent.name``; no ``gen_ai.agent.id``, which v0.1.0 removed from internal agent
  spans), the root of the trace;
- each model call → ``chat <model>`` (CLIENT; ``gen_ai.request.model``,
  ``gen_ai.provider.name``, ``gen_ai.usage.input_tokens`` / ``output_tokens``);
- each tool call → ``execute_tool <tool>`` (INTERNAL; ``gen_ai.tool.name``,
  ``gen_ai.tool.call.id``);
- every span of a run recorded from an agent session (or imported from a trace that
  named one) → ``gen_ai.conversation.id``, the session.

The GASP ids ride along as ``gasp.*`` attributes (run, node, creating event, agent,
status, outcome). A failed call or run has status ERROR with its message and
``error.type``. Trace and span ids are hashes of the GASP ids (or the ids a run
imported from OpenTelemetry came with), times come from the nodes' ``*_ts_ms`` or
their events, so exporting the same log again gives the same bytes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from git_gasp import __version__
from git_gasp.base.errors import GaspError, UsageError
from git_gasp.otel.otlp import (
    KIND_CLIENT,
    KIND_INTERNAL,
    STATUS_ERROR,
    attributes,
    span_id,
    trace_id,
)
from git_gasp.protocol.fold import fold
from git_gasp.protocol.idmatch import match_id
from git_gasp.store.agent import load_agent

SCOPE = "git-gasp"
FAILED_OUTCOMES = frozenset({"failed", "error", "errored", "crashed"})
CALL_KINDS = ("model_call", "tool_call")


@dataclass
class _Times:
    created: dict[str, tuple[str, int]] = field(default_factory=dict)  # node -> (event, ts)
    finished: dict[str, int] = field(default_factory=dict)  # node -> ts of its finish


def _index(events: list) -> _Times:
    """When each run and call was created and finished, from the log's events."""
    times = _Times()
    for e in events:
        p = e.payload
        if type(p) is not dict:
            continue
        if e.kind == "run.started":
            nid = p.get("run_id")
        elif e.kind in ("model.called", "tool.called"):
            nid = p.get("id")
        elif e.kind == "run.finished":
            nid = p.get("run_id")
            if isinstance(nid, str):
                times.finished[nid] = e.ts_ms
            continue
        elif e.kind in ("model.finished", "tool.finished"):
            nid = p.get("id")
            if isinstance(nid, str):
                times.finished[nid] = e.ts_ms
            continue
        else:
            continue
        if isinstance(nid, str):
            times.created.setdefault(nid, (e.id, e.ts_ms))
    return times


def _source(props: dict) -> dict:
    """Where a node imported from a trace came from (`otel.importer`), else {}."""
    meta = props.get("metadata")
    src = meta.get("source") if isinstance(meta, dict) else None
    return src if isinstance(src, dict) and src.get("format") == "otlp" else {}


def _conversation(props: dict) -> str | None:
    """The session a run recorded: the agent session an adapter recorded it from, or the
    ``gen_ai.conversation.id`` of the trace it was imported from."""
    meta = props.get("metadata")
    src = meta.get("source") if isinstance(meta, dict) else None
    if not isinstance(src, dict):
        return None
    conv = src.get("conversation_id") if src.get("format") == "otlp" else src.get("session_id")
    return conv if isinstance(conv, str) and conv else None


def _source_ids(props: dict) -> tuple[str | None, str | None]:
    """The OpenTelemetry ids a node imported from a trace came with."""
    src = _source(props)
    tid, sid = src.get("trace_id"), src.get("span_id")
    ok_t = isinstance(tid, str) and len(tid) == 32
    ok_s = isinstance(sid, str) and len(sid) == 16
    return (tid if ok_t else None), (sid if ok_s else None)


def _usage(props: dict) -> dict:
    for where in (props, props.get("outcome_metadata"), props.get("metadata")):
        usage = where.get("usage") if isinstance(where, dict) else None
        if isinstance(usage, dict):
            return usage
    return {}


def _tokens(usage: dict, *keys: str) -> int | None:
    for key in keys:
        value = usage.get(key)
        if type(value) is int:
            return value
    return None


def _error(props: dict) -> str:
    for where in (props, props.get("outcome_metadata")):
        err = where.get("error") if isinstance(where, dict) else None
        if isinstance(err, str) and err:
            return err
    return str(props.get("output_summary") or "failed")


def _status(failed: bool, message: str) -> dict:
    return {"code": STATUS_ERROR, "message": message} if failed else {}


class Exporter:
    """The OTLP/JSON lines of one agent repo's runs."""

    def __init__(self, root: Path) -> None:
        repo = load_agent(root)
        if repo.manifest is None:
            raise GaspError(f"{root}: not an agent repo ({repo.manifest_error})")
        if repo.log_error is not None:
            raise GaspError(repo.log_error)
        self.log_rel = repo.log_rel
        self.agent_id = repo.manifest.agent_id
        events = repo.parsed.events
        self.graph = fold(events).graph
        self.times = _index(events)
        self.runs = [n for n in self.graph.iter_nodes()
                     if n["kind"] == "run" and not n.get("tombstoned")]
        self.calls: dict[str, list[dict]] = {}
        for node in self.graph.iter_nodes():
            if node["kind"] in CALL_KINDS and not node.get("tombstoned"):
                run = node["props"].get("run_id")
                if isinstance(run, str):
                    self.calls.setdefault(run, []).append(node)

    def select(self, run: str | None) -> list[dict]:
        """Every run (None), or the one `run` names exactly or by a unique prefix."""
        if not self.runs:
            raise GaspError(f"no runs in {self.log_rel}: nothing to export")
        if run is None:
            return self.runs
        full = match_id((n["id"] for n in self.runs), run, "run")
        found = [n for n in self.runs if n["id"] == full]
        if not found:
            raise UsageError(f"no run {run!r} in {self.log_rel}")
        return found

    def lines(self, run: str | None = None) -> list[bytes]:
        """One ``ExportTraceServiceRequest`` JSON line (newline included) per run."""
        return [self.line(node) for node in self.select(run)]

    def line(self, run: dict) -> bytes:
        request = {"resourceSpans": [{
            "resource": {"attributes": attributes({"service.name": self.agent_id})},
            "scopeSpans": [{"scope": self._scope(), "spans": self.spans(run)}]}]}
        return json.dumps(request, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"

    @staticmethod
    def _scope() -> dict:
        return {"name": SCOPE, "version": __version__}

    def _start(self, node: dict) -> tuple[str | None, int]:
        """The creating event and the start in nanoseconds: the imported span's, else the
        node's ``started_ts_ms``, else its event's time."""
        event, ts = self.times.created.get(node["id"], (None, 0))
        src = _source(node["props"])
        if type(src.get("start_ns")) is int:
            return event, src["start_ns"]
        started = node["props"].get("started_ts_ms")
        return event, (started if type(started) is int else ts) * 1_000_000

    def _end(self, node: dict) -> int | None:
        src = _source(node["props"])
        if type(src.get("end_ns")) is int and node["props"].get("status") != "running":
            return src["end_ns"]
        finished = node["props"].get("finished_ts_ms")
        if type(finished) is int:
            return finished * 1_000_000
        ts = self.times.finished.get(node["id"])
        return None if ts is None else ts * 1_000_000

    def spans(self, run: dict) -> list[dict]:
        """The run's span and its calls' spans, in log order."""
        rid, props = run["id"], run["props"]
        tid, sid = _source_ids(props)
        tid = tid or trace_id(rid)
        root = sid or span_id(rid)
        conversation = _conversation(props)
        calls = [self._call_span(c, tid, root, rid, conversation)
                 for c in self.calls.get(rid, [])]
        event, start = self._start(run)
        end = self._end(run)
        if end is None:  # still running: up to its last call
            end = max([start] + [int(s["endTimeUnixNano"]) for s in calls])
        outcome = props.get("outcome")
        meta = props.get("metadata") if isinstance(props.get("metadata"), dict) else {}
        error = props.get("error") or meta.get("error")
        failed = outcome in FAILED_OUTCOMES or bool(props.get("error"))
        providers = {c["props"].get("provider") for c in self.calls.get(rid, [])
                     if c["kind"] == "model_call"}
        provider = providers.pop() if len(providers) == 1 else None
        attrs = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": self.agent_id,
            "gen_ai.provider.name": provider if isinstance(provider, str) else None,
            "gen_ai.conversation.id": conversation,
            "gasp.agent.id": self.agent_id,
            "gasp.run.id": rid,
            "gasp.node.id": rid,
            "gasp.event.id": event,
            "gasp.run.task": props.get("task"),
            "gasp.goal.id": props.get("goal_id"),
            "gasp.task.id": props.get("task_id"),
            "gasp.status": props.get("status"),
            "gasp.run.outcome": outcome,
            "error.type": "_OTHER" if failed else None,
        }
        span = {"traceId": tid, "spanId": root,
                "name": f"invoke_agent {self.agent_id}", "kind": KIND_INTERNAL,
                "startTimeUnixNano": str(start), "endTimeUnixNano": str(max(end, start)),
                "attributes": attributes(_strs(attrs)),
                "status": _status(failed, str(error or outcome or "failed"))}
        return [span, *calls]

    def _call_span(self, node: dict, tid: str, parent: str, rid: str,
                   conversation: str | None) -> dict:
        nid, props = node["id"], node["props"]
        _, sid = _source_ids(props)
        event, start = self._start(node)
        end = self._end(node)
        failed = props.get("status") == "failed" or props.get("success") is False
        common = {"gasp.run.id": rid, "gasp.node.id": nid, "gasp.event.id": event,
                  "gasp.status": props.get("status"),
                  "gasp.input_summary": props.get("input_summary"),
                  "gasp.output_summary": props.get("output_summary"),
                  "error.type": "_OTHER" if failed else None}
        if node["kind"] == "model_call":
            model = str(props.get("model") or "unknown")
            usage = _usage(props)
            attrs = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model,
                     "gen_ai.provider.name": props.get("provider"),
                     "gen_ai.conversation.id": conversation,
                     "gen_ai.usage.input_tokens": _tokens(usage, "input_tokens",
                                                          "prompt_tokens"),
                     "gen_ai.usage.output_tokens": _tokens(usage, "output_tokens",
                                                           "completion_tokens"),
                     **common}
            name, kind = f"chat {model}", KIND_CLIENT
        else:
            tool = str(props.get("tool") or "unknown")
            meta = props.get("metadata") if isinstance(props.get("metadata"), dict) else {}
            call_id = meta.get("tool_call_id") or meta.get("tool_use_id") or nid
            attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool,
                     "gen_ai.tool.call.id": call_id if isinstance(call_id, str) else nid,
                     "gen_ai.conversation.id": conversation, **common}
            name, kind = f"execute_tool {tool}", KIND_INTERNAL
        return {"traceId": tid, "spanId": sid or span_id(nid), "parentSpanId": parent,
                "name": name, "kind": kind, "startTimeUnixNano": str(start),
                "endTimeUnixNano": str(max(end if end is not None else start, start)),
                "attributes": attributes(_strs(attrs)), "status": _status(failed, _error(props))}


def _strs(attrs: dict[str, Any]) -> dict[str, Any]:
    """Attributes with the non-scalar values dropped (a prop of an unexpected type)."""
    return {k: v for k, v in attrs.items()
            if v is not None and isinstance(v, (str, int, float, bool))}


def export_otel(root: Path, run: str | None = None) -> bytes:
    """The OTLP/JSON lines of run `run` (a unique id prefix will do), or of every run."""
    return b"".join(Exporter(root).lines(run))
