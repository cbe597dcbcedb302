"""The runs of the timeline: one summary per run, from its run node (when the fold has
one) and its events. The raw layer (model and tool calls) is counted, not copied: per
run the calls by tool and model, their failures and token usage, and its first
`CALLS_KEPT` calls listed."""

from __future__ import annotations

from typing import Any

from git_gasp.protocol.envelope import OPS_KIND, Event

RAW_NODE_KINDS = frozenset({"model_call", "tool_call"})
RAW_EVENT_PREFIXES = ("model.", "tool.")
CALLS_KEPT = 40  # calls listed per run; the others are only counted
SUMMARY_CHARS = 160  # of a call's input or output summary
_MAKERS = frozenset({"goal.created", "task.created"})  # events a run may be started by


def is_raw_event(kind: str) -> bool:
    """A model or tool call's event (the raw layer a run summary counts)."""
    return kind.startswith(RAW_EVENT_PREFIXES)


def tokens_of(payload: Any) -> dict[str, int] | None:
    """Token counts an event records (`usage`, `metadata.usage`, `metadata` or the
    payload itself, the first holding `…tokens` integers), else None."""
    if not isinstance(payload, dict):
        return None
    meta = payload.get("metadata")
    inner = meta.get("usage") if isinstance(meta, dict) else None
    for where in (payload.get("usage"), inner, meta, payload):
        if isinstance(where, dict):
            found = {k: v for k, v in where.items()
                     if isinstance(k, str) and k.endswith("tokens") and type(v) is int and v >= 0}
            if found:
                return found
    return None


def _text(value: Any, limit: int = SUMMARY_CHARS) -> str:
    if not isinstance(value, str):
        return ""
    return value if len(value) <= limit else value[:limit] + "…"


def _int(value: Any) -> int | None:
    return value if type(value) is int else None


class RunSummary:
    """What the page shows of one run (`to_json` gives the page's record)."""

    def __init__(self, run_id: str) -> None:
        self.id = run_id
        self.start: int | None = None
        self.end: int | None = None
        self.duration: int | None = None
        self.outcome: str | None = None
        self.status: str | None = None
        self.task = ""
        self.person: str | None = None  # who ran it (metadata.person)
        self.agent: str | None = None  # what ran it (metadata.source.agent, else the actor)
        self.goal: str | None = None
        self.error = ""
        self.models: dict[str, int] = {}
        self.tools: dict[str, int] = {}
        self.tokens: dict[str, int] = {}
        self.events = 0
        self.counts = {"tool_calls": 0, "tool_failed": 0, "model_calls": 0,
                       "model_failed": 0}
        self.calls: list[list[Any]] = []  # [kind, name, status, duration_ms, summary, ts]
        self._kept: dict[str, list[Any]] = {}  # call id -> its row in `calls`
        self.rows: list[int] = []  # the page's event rows of its domain events

    def see(self, event: Event, made_by: dict[str, str]) -> None:
        """Count `event` (of this run) in; `made_by`: goal and task ids by the event
        that created them."""
        self.events += 1
        ts = event.ts_ms
        if self.start is None or ts < self.start:
            self.start = ts
        if self.end is None or ts > self.end:
            self.end = ts
        kind = event.kind
        if kind == OPS_KIND:
            return
        p = event.payload if type(event.payload) is dict else {}
        if kind == "run.started":
            self.start = event.ts_ms
            self.agent = self.agent or _text(event.actor_id, 200) or None
            self.task = self.task or _text(p.get("task"), 2000)
            self.goal = self.goal or (p.get("goal_id") if isinstance(p.get("goal_id"), str)
                                      else None)
            self.status = self.status or "running"
            if self.goal is None and event.causation_id in made_by:
                self.goal = made_by[event.causation_id]  # started by the goal's event
        elif kind == "run.finished":
            self.end = event.ts_ms
            self.outcome = p.get("outcome") if isinstance(p.get("outcome"), str) else None
            self.duration = _int(p.get("duration_ms")) or self.duration
            self.error = _text(p.get("error"), 2000) or self.error
            self.status = "finished"
        elif is_raw_event(kind):
            self._call(kind, p, event.ts_ms)

    def _call(self, kind: str, p: dict, ts: int) -> None:
        what, _dot, verb = kind.partition(".")
        call_id = p.get("id") if isinstance(p.get("id"), str) else None
        found = tokens_of(p) if what == "model" else None
        if found:
            for k, v in found.items():
                self.tokens[k] = self.tokens.get(k, 0) + v
        if verb == "called":
            name = p.get("tool" if what == "tool" else "model")
            name = name if isinstance(name, str) and name else "?"
            table = self.tools if what == "tool" else self.models
            table[name] = table.get(name, 0) + 1
            self.counts[f"{what}_calls"] += 1
            if len(self.calls) < CALLS_KEPT:
                row = [what, name, "running", None, _text(p.get("input_summary")), ts]
                self.calls.append(row)
                if call_id:
                    self._kept[call_id] = row
        elif verb == "finished":
            failed = p.get("success") is False or p.get("error") is not None
            if failed:
                self.counts[f"{what}_failed"] += 1
            row = self._kept.get(call_id or "")
            if row is not None:
                row[2] = "failed" if failed else "succeeded"
                row[3] = _int(p.get("duration_ms"))
                row[4] = _text(p.get("output_summary")) or row[4]

    def take_node(self, node: dict) -> None:
        """The run node's props win over what its events said."""
        props = node["props"]
        self.task = _text(props.get("task"), 2000) or self.task
        for key, attr in (("outcome", "outcome"), ("status", "status"), ("goal_id", "goal")):
            if isinstance(props.get(key), str):
                setattr(self, attr, props[key])
        self.start = _int(props.get("started_ts_ms")) or self.start
        self.end = _int(props.get("finished_ts_ms")) or self.end
        self.duration = _int(props.get("duration_ms")) or self.duration
        self.error = _text(props.get("error"), 2000) or self.error
        meta = props.get("metadata")
        who = meta.get("person") if isinstance(meta, dict) else None
        self.person = _text(who, 200) if isinstance(who, str) else self.person
        src = meta.get("source") if isinstance(meta, dict) else None
        agent = src.get("agent") if isinstance(src, dict) else None
        agent = agent if isinstance(agent, str) else (
            meta.get("agent") if isinstance(meta, dict) else None)
        self.agent = _text(agent, 200) if isinstance(agent, str) and agent else self.agent
        model = meta.get("model") if isinstance(meta, dict) else None
        if isinstance(model, str) and model and model not in self.models:
            self.models[model] = 0

    def to_json(self) -> dict[str, Any]:
        duration = self.duration
        if duration is None and self.start is not None and self.end is not None \
                and self.status == "finished":
            duration = self.end - self.start
        return {"id": self.id, "task": self.task, "person": self.person, "agent": self.agent,
                "start": self.start, "end": self.end,
                "dur": duration, "outcome": self.outcome, "status": self.status or "running",
                "error": self.error, "models": self.models, "tools": self.tools,
                "tokens": self.tokens, "n": {"events": self.events, **self.counts},
                "calls": self.calls, "e": self.rows}


class RunTable:
    """Every run of the log: the run nodes of the fold and the runs its events name."""

    def __init__(self, graph_nodes: dict[str, dict]) -> None:
        self.runs: dict[str, RunSummary] = {}
        self.made_by: dict[str, str] = {}  # event id -> the goal or task it created
        for nid, node in graph_nodes.items():
            if node["kind"] == "run":
                self.runs[nid] = RunSummary(nid)
        self._nodes = graph_nodes

    def run_of(self, event: Event) -> str | None:
        """The run `event` belongs to: its payload's `run_id`, else its correlation id
        when that names a run."""
        p = event.payload
        if type(p) is dict:
            rid = p.get("run_id")
            if type(rid) is str and rid and (rid in self.runs or event.kind.startswith(
                    ("run.", *RAW_EVENT_PREFIXES))):
                return rid
        corr = event.correlation_id
        return corr if corr is not None and corr in self.runs else None

    def see(self, event: Event) -> str | None:
        """Count `event` into its run; the run's id, or None."""
        if event.kind in _MAKERS and type(event.payload) is dict \
                and isinstance(event.payload.get("id"), str):
            self.made_by[event.id] = event.payload["id"]
        rid = self.run_of(event)
        if rid is None:
            return None
        run = self.runs.get(rid)
        if run is None:
            run = self.runs[rid] = RunSummary(rid)
        run.see(event, self.made_by)
        return rid

    def finish(self) -> list[RunSummary]:
        """The runs, their nodes taken in, in order of start."""
        for rid, run in self.runs.items():
            node = self._nodes.get(rid)
            if node is not None and node["kind"] == "run":
                run.take_node(node)
        return sorted(self.runs.values(),
                      key=lambda r: (r.start if r.start is not None else 0, r.id))
