"""What one run did, read from the fold and its log: `RunRecap`, built by `recap_runs`.

A run's events are those naming it (a run, model or tool event's ``run_id``) or
correlated with it; its nodes are the ones those events created, in log order, and the
nodes the fold says were ``produced_by`` it. From them: the goal it served, what it
tried (tasks, hypotheses, patches, its tool calls counted), what failed and why (each
failure with the hypotheses that explain it, failed tool calls, the run's error), the
patches and the commits they pin, the evals in the order they ran (so an eval that
failed and then passed reads so), the decisions with their reasons, and what it left
open (tasks of the run or its goal not done, commands whose last eval failed). Nothing
is inferred beyond what the log records: the same log gives the same account.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from git_gasp.protocol.envelope import OPS_KIND, Event
from git_gasp.protocol.graph import Graph
from git_gasp.runtime.queries import label
from git_gasp.runtime.transitions import TRANSITIONS

RUN_EVENT_PREFIXES = ("run.", "model.", "tool.")  # events that name their run in run_id
RAW_KINDS = ("model_call", "tool_call")
OPEN_TASK = tuple(TRANSITIONS["task"])  # Open, InProgress, Blocked: not done
FAILED_EVAL = ("Failed", "Error")
TEXT_LIMIT = 300  # characters of one item's text kept


def _text(value: object, limit: int = TEXT_LIMIT) -> str:
    text = " ".join(str(value).split()) if isinstance(value, str) else ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: object) -> int | None:
    return value if type(value) is int else None


@dataclass
class Item:
    """One node of the account: its id, kind, status and one line of text, plus what
    its kind adds (a patch's commit, an eval's score and patch, a decision's patch, a
    failure's explanations)."""

    id: str
    kind: str
    status: str | None
    text: str
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "status": self.status, "text": self.text,
                **self.extra}


@dataclass
class RunRecap:
    """The account of one run (see the module doc); `to_json` is `recap --json`'s."""

    id: str
    task: str = ""
    status: str = "unknown"
    outcome: str | None = None
    error: str | None = None
    started_ts_ms: int | None = None
    finished_ts_ms: int | None = None
    agent: str | None = None
    person: str | None = None
    models: list[str] = field(default_factory=list)
    transcript: str | None = None
    goal: Item | None = None
    derived_from: list[str] = field(default_factory=list)
    continued_by: list[str] = field(default_factory=list)
    tasks: list[Item] = field(default_factory=list)
    hypotheses: list[Item] = field(default_factory=list)
    failures: list[Item] = field(default_factory=list)
    patches: list[Item] = field(default_factory=list)
    evals: list[Item] = field(default_factory=list)
    decisions: list[Item] = field(default_factory=list)
    open_tasks: list[Item] = field(default_factory=list)
    tools: dict[str, int] = field(default_factory=dict)
    tool_calls: int = 0
    tool_failures: int = 0
    model_calls: int = 0
    events: int = 0

    def eval_outcomes(self) -> list[tuple[str, list[str]]]:
        """Each eval command with its statuses in the order they ran."""
        out: dict[str, list[str]] = {}
        for e in self.evals:
            out.setdefault(e.text, []).append(e.status or "?")
        return list(out.items())

    def failing_evals(self) -> list[str]:
        """The eval commands whose last run failed."""
        return [cmd for cmd, seen in self.eval_outcomes() if seen[-1] in FAILED_EVAL]

    def to_json(self) -> dict[str, Any]:
        items = ("tasks", "hypotheses", "failures", "patches", "evals", "decisions",
                 "open_tasks")
        return {"id": self.id, "task": self.task, "status": self.status,
                "outcome": self.outcome, "error": self.error,
                "started_ts_ms": self.started_ts_ms, "finished_ts_ms": self.finished_ts_ms,
                "agent": self.agent, "person": self.person, "models": self.models,
                "transcript": self.transcript,
                "goal": self.goal.to_json() if self.goal else None,
                "derived_from": self.derived_from, "continued_by": self.continued_by,
                **{k: [i.to_json() for i in getattr(self, k)] for k in items},
                "failing_evals": self.failing_evals(),
                "calls": {"tools": self.tools, "tool_calls": self.tool_calls,
                          "tool_failures": self.tool_failures, "model_calls": self.model_calls},
                "events": self.events}


def run_ids(graph: Graph, events: list[Event]) -> list[str]:
    """Every run of the log in the order it started: the runs its run.started events
    name, then run nodes no such event names."""
    ids: dict[str, None] = {}
    for e in events:
        if e.kind == "run.started" and type(e.payload) is dict:
            rid = _str(e.payload.get("run_id"))
            if rid:
                ids.setdefault(rid)
    for nid, node in graph.nodes.items():
        if node["kind"] == "run":
            ids.setdefault(nid)
    return list(ids)


def _run_of(event: Event, runs: set[str] | dict) -> str | None:
    p = event.payload
    if type(p) is dict and event.kind.startswith(RUN_EVENT_PREFIXES):
        rid = _str(p.get("run_id"))
        if rid:
            return rid
    corr = event.correlation_id
    return corr if corr in runs else None


def _created(event: Event) -> list[str]:
    """The node ids `event` creates: its ops' CreateNode ids, or a domain event's id."""
    p = event.payload
    if event.kind == OPS_KIND:
        return [op["CreateNode"]["id"] for op in p if type(op) is dict
                and type(op.get("CreateNode")) is dict
                and isinstance(op["CreateNode"].get("id"), str)] if type(p) is list else []
    if type(p) is dict:
        nid = _str(p.get("run_id") if event.kind == "run.started" else p.get("id"))
        return [nid] if nid else []
    return []


def recap_runs(graph: Graph, events: list[Event], wanted: list[str]) -> list[RunRecap]:
    """The account of each run of `wanted` (ids of `run_ids`), in that order."""
    want = set(wanted)
    runs = set(run_ids(graph, events))
    own: dict[str, list[Event]] = {r: [] for r in wanted}
    made_by: dict[str, str] = {}  # event id -> the node it created (a run's starter)
    for e in events:
        for nid in _created(e)[:1]:
            made_by.setdefault(e.id, nid)
        rid = _run_of(e, runs)
        if rid in want:
            own[rid].append(e)
    produced: dict[str, list[str]] = {}
    for r in graph.relations:
        if r["rel"] == "produced_by" and r["to"] in want:
            produced.setdefault(r["to"], []).append(r["from"])
    return [_account(graph, rid, own[rid], produced.get(rid, []), made_by) for rid in wanted]


def _account(graph: Graph, rid: str, events: list[Event], produced: list[str],
             made_by: dict[str, str]) -> RunRecap:
    rec = RunRecap(rid, events=len(events))
    nodes: dict[str, None] = {}
    said: dict[str, dict] = {}  # node id -> the payload of the domain event creating it
    for e in events:
        if e.kind == "run.started" and type(e.payload) is dict:
            _started(rec, e, made_by)
        elif e.kind == "run.finished" and type(e.payload) is dict:
            rec.status = "finished"
            rec.outcome = _str(e.payload.get("outcome")) or rec.outcome
            rec.error = _text(e.payload.get("error")) or rec.error
            rec.finished_ts_ms = e.ts_ms
        for nid in _created(e):
            if nid != rid:
                nodes.setdefault(nid)
                if e.kind != OPS_KIND:
                    said.setdefault(nid, e.payload)
    for nid in produced:
        nodes.setdefault(nid)
    run = graph.node(rid)
    if run is not None and run["kind"] == "run":
        _take_node(rec, graph, run)
    for nid in nodes:
        node = graph.node(nid)
        if node is not None and not node.get("tombstoned"):
            _take(rec, graph, _with_payload(node, said.get(nid)))
    found = graph.node(rec.goal.id) if rec.goal is not None else None
    if found is not None:
        rec.goal = _item(found)
    if rec.goal is None:
        goals = [graph.node(nid) for nid in nodes]
        goal = next((g for g in goals if g is not None and g["kind"] == "goal"), None)
        goal = goal or _advanced_goal(graph, rec.patches)
        rec.goal = _item(goal) if goal else None
    rec.open_tasks = _open_tasks(graph, rec)
    return rec


def _started(rec: RunRecap, e: Event, made_by: dict[str, str]) -> None:
    p = e.payload
    rec.status = "running" if rec.status == "unknown" else rec.status
    rec.started_ts_ms = e.ts_ms
    rec.task = _text(p.get("task"), 2000) or rec.task
    rec.agent = rec.agent or _text(e.actor_id, 200) or None
    meta = p.get("metadata") if type(p.get("metadata")) is dict else {}
    rec.transcript = _str(meta.get("transcript_path")) or rec.transcript
    goal = _str(p.get("goal_id")) or made_by.get(e.causation_id or "")
    if goal and rec.goal is None:
        rec.goal = Item(goal, "goal", None, "")  # completed from its node (_account)


def _take_node(rec: RunRecap, graph: Graph, run: dict) -> None:
    props = run["props"]
    rec.task = _text(props.get("task"), 2000) or rec.task
    rec.status = _str(props.get("status")) or rec.status
    rec.outcome = _str(props.get("outcome")) or rec.outcome
    rec.error = _text(props.get("error")) or rec.error
    rec.started_ts_ms = _int(props.get("started_ts_ms")) or rec.started_ts_ms
    rec.finished_ts_ms = _int(props.get("finished_ts_ms")) or rec.finished_ts_ms
    meta = props.get("metadata") if type(props.get("metadata")) is dict else {}
    src = meta.get("source") if type(meta.get("source")) is dict else {}
    rec.agent = _str(src.get("agent")) or _str(meta.get("agent")) or rec.agent
    rec.person = _str(meta.get("person")) or rec.person
    rec.transcript = _str(meta.get("transcript_path")) or rec.transcript
    models = props.get("models") if type(props.get("models")) is list else []
    rec.models = [m for m in models if isinstance(m, str)] or (
        [props["model"]] if _str(props.get("model")) else [])
    rec.derived_from = [r["to"] for r in graph.outgoing(run["id"], "derived_from")]
    rec.continued_by = [r["from"] for r in graph.incoming(run["id"], "derived_from")]
    goal = _str(props.get("goal_id")) or (rec.goal.id if rec.goal else None) or next(
        (r["to"] for r in graph.outgoing(run["id"], "serves")
         if (graph.node(r["to"]) or {}).get("kind") == "goal"), None)
    if goal:
        rec.goal = Item(goal, "goal", None, "")  # completed from its node (_account)


def _with_payload(node: dict, payload: dict | None) -> dict:
    """`node` whose props lack what its domain event said (a decision's reason kept in
    decision.created only, say) completed from that event's payload."""
    if not payload:
        return node
    missing = {k: v for k, v in payload.items() if k not in node["props"]}
    return dict(node, props={**missing, **node["props"]}) if missing else node


def _item(node: dict, **extra: Any) -> Item:
    status = node["props"].get("status")
    return Item(node["id"], node["kind"], status if isinstance(status, str) else None,
                _text(label(node)), {k: v for k, v in extra.items() if v not in (None, [])})


def _take(rec: RunRecap, graph: Graph, node: dict) -> None:
    kind, props, nid = node["kind"], node["props"], node["id"]
    if kind == "tool_call":
        rec.tool_calls += 1
        tool = _str(props.get("tool")) or "?"
        rec.tools[tool] = rec.tools.get(tool, 0) + 1
        rec.tool_failures += props.get("success") is False or props.get("status") == "failed"
    elif kind == "model_call":
        rec.model_calls += 1
    elif kind == "task":
        rec.tasks.append(_item(node))
    elif kind == "hypothesis":
        rec.hypotheses.append(_item(node))
    elif kind == "failure":
        why = [_text(label(graph.node(r["from"]) or {"props": {}}))
               for r in graph.incoming(nid, "explains")]
        rec.failures.append(_item(node, explained_by=[w for w in why if w]))
    elif kind == "patch":
        rec.patches.append(_item(node, commit=_str(props.get("references_commit")),
                                 skill=_str(props.get("skill"))))
    elif kind == "eval":
        patch = next((r["from"] for r in graph.incoming(nid, "validated_by")), None)
        score = props.get("score")
        rec.evals.append(_item(node, score=score if type(score) in (int, float) else None,
                               patch=patch))
    elif kind == "decision":
        patch = next((r["from"] for r in graph.incoming(nid)
                      if r["rel"] in ("approved_by", "rejected_by")), None)
        rec.decisions.append(_item(node, patch=patch))
    elif kind == "goal" and rec.goal is None:
        rec.goal = _item(node)


def _advanced_goal(graph: Graph, patches: list[Item]) -> dict | None:
    for p in patches:
        for r in graph.outgoing(p.id, "advances"):
            node = graph.node(r["to"])
            if node is not None and node["kind"] == "goal":
                return node
    return None


def _open_tasks(graph: Graph, rec: RunRecap) -> list[Item]:
    """Tasks of the run, then tasks serving its goal, that are not done."""
    ids = dict.fromkeys(t.id for t in rec.tasks)
    if rec.goal is not None:
        ids.update(dict.fromkeys(r["from"] for r in graph.incoming(rec.goal.id, "serves")))
    out = []
    for nid in ids:
        node = graph.node(nid)
        if node is not None and node["kind"] == "task" and not node.get("tombstoned") \
                and node["props"].get("status") in OPEN_TASK:
            out.append(_item(node))
    return out
