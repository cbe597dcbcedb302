"""What the agents did, counted from the fold and the log: sessions (runs), tool and
model calls and tokens (per run by `view.runs.RunTable`, the page's one count), evals and
their pass rate, patches by status; in all, or for a set of runs."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from git_gasp.protocol.envelope import Event
from git_gasp.protocol.graph import Graph
from git_gasp.stats.authorship import UNKNOWN, RunInfo
from git_gasp.view.runs import RunSummary, RunTable

PATCH_STATUSES = ("Proposed", "Promoted", "Rejected")


def runs_of(graph: Graph, events: Iterable[Event]) -> list[RunSummary]:
    """Every run of the log summarised (`view.runs`), in order of start."""
    table = RunTable(graph.nodes)
    for event in events:
        table.see(event)
    return table.finish()


def run_info(run: RunSummary) -> RunInfo:
    """The run's agent and the model it called most (the first named, on a tie)."""
    model = max(run.models, key=lambda m: run.models[m]) if run.models else None
    return RunInfo(run.agent or None, model)


def _add(table: dict[str, int], key: str, n: int = 1) -> None:
    table[key] = table.get(key, 0) + n


@dataclass
class Activity:
    """Sessions, calls, tokens, evals and patches of some runs (or of the whole log)."""

    sessions: int = 0
    tool_calls: int = 0
    model_calls: int = 0
    tokens: dict[str, int] = field(default_factory=dict)
    by_agent: dict[str, dict[str, Any]] = field(default_factory=dict)
    by_model: dict[str, int] = field(default_factory=dict)  # model calls by model
    by_person: dict[str, int] = field(default_factory=dict)  # sessions by person
    evals: dict[str, int] = field(default_factory=lambda: {"run": 0, "passed": 0,
                                                           "failed": 0})
    patches: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        ("proposed", "promoted", "rejected"), 0))

    @property
    def pass_rate(self) -> float | None:
        return round(self.evals["passed"] / self.evals["run"], 4) if self.evals["run"] else None

    def to_json(self) -> dict[str, Any]:
        return {"sessions": self.sessions, "tool_calls": self.tool_calls,
                "model_calls": self.model_calls, "tokens": self.tokens,
                "evals": {**self.evals, "pass_rate": self.pass_rate},
                "patches": self.patches}


def count(graph: Graph, runs: list[RunSummary], scope: set[str] | None = None) -> Activity:
    """The activity of `runs` (those in `scope` when given) and the evals and patches
    they produced; without a scope, every eval and patch of the fold."""
    out = Activity()
    for run in runs:
        if scope is not None and run.id not in scope:
            continue
        out.sessions += 1
        out.tool_calls += run.counts["tool_calls"]
        out.model_calls += run.counts["model_calls"]
        for k, v in run.tokens.items():
            _add(out.tokens, k, v)
        agent = out.by_agent.setdefault(run.agent or UNKNOWN, {
            "sessions": 0, "tool_calls": 0, "model_calls": 0})
        agent["sessions"] += 1
        agent["tool_calls"] += run.counts["tool_calls"]
        agent["model_calls"] += run.counts["model_calls"]
        for model, n in run.models.items():
            _add(out.by_model, model, n)
        _add(out.by_person, run.person or UNKNOWN)
    for node in _nodes(graph, scope):
        status = node["props"].get("status")
        if node["kind"] == "eval":
            out.evals["run"] += 1
            if status in ("Passed", "Failed"):
                out.evals[status.lower()] += 1
        elif node["kind"] == "patch" and status in PATCH_STATUSES:
            out.patches[status.lower()] += 1
    return out


def _nodes(graph: Graph, scope: set[str] | None) -> Iterable[dict]:
    """The live eval and patch nodes of the fold (of `scope`'s runs: produced by one, or
    an eval validating a patch one produced)."""
    wanted: dict[str, None] | None = None
    if scope is not None:
        wanted, checks = {}, {}
        for rel in graph.relations:
            if rel["rel"] == "produced_by" and rel["to"] in scope:
                wanted.setdefault(rel["from"])
            elif rel["rel"] == "validated_by":
                checks.setdefault(rel["from"], []).append(rel["to"])
        for nid in list(wanted):
            for eid in checks.get(nid, ()):
                wanted.setdefault(eid)
    ids = graph.node_ids() if wanted is None else wanted
    for nid in ids:
        node = graph.node(nid)
        if node is not None and node["kind"] in ("eval", "patch") \
                and not node.get("tombstoned"):
            yield node
