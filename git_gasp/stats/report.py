"""`git gasp report BASE..HEAD` computed: the commits of a pull request's range, the runs
whose patches explain them (blame's engine), those runs' goals, the evals and decisions
on their patches (failing evals first), and the AI share of the lines the range changed
(the lines at HEAD its commits wrote, `lines.tally`)."""

from __future__ import annotations

from typing import Any

from git_gasp.attribution.blame import Explainer
from git_gasp.attribution.porcelain import CommitInfo
from git_gasp.attribution.trace_import import Imported
from git_gasp.base import git
from git_gasp.base.errors import UsageError
from git_gasp.protocol.envelope import Event
from git_gasp.protocol.graph import Graph
from git_gasp.runtime.queries import label
from git_gasp.stats.activity import run_info, runs_of
from git_gasp.stats.lines import tally, tree_files
from git_gasp.stats.scope import Scope

_EVAL_ORDER = {"Failed": 0, "Passed": 1}


def _subjects(top: str, scope: Scope) -> list[tuple[str, str]]:
    data = git.run(top, "log", "--reverse", "--format=%H%x00%s",
                   f"{scope.base}..{scope.tip}").stdout.decode("utf-8", "replace")
    return [tuple(line.split("\0", 1)) for line in data.splitlines() if "\0" in line]


def _touched(top: str, scope: Scope) -> list[bytes]:
    """The files of the tip's tree that the range's commits changed."""
    data = git.run(top, "log", "--format=", "--name-only", "-z",
                   f"{scope.base}..{scope.tip}").stdout
    named = {p.strip(b"\n") for p in data.split(b"\0")} - {b""}
    return [p for p in tree_files(top, scope.tip) if p in named]


def _targets(graph: Graph, rels: dict, node: str, *names: str) -> list[str]:
    return [t for n in names for t in rels.get((node, n), ()) if graph.has_node(t)]


def build(top: str, graph: Graph, events: list[Event], scope: Scope) -> dict[str, Any]:
    """The report of range `scope` (a range: `scope.base` set)."""
    if scope.base is None or scope.commits is None:
        raise UsageError("report takes a range: BASE..HEAD")
    runs = runs_of(graph, events)
    summaries = {r.id: r for r in runs}
    infos = {r.id: run_info(r) for r in runs}
    explainer = Explainer(top, graph, Imported(graph))
    whys = explainer.whys({sha: CommitInfo(sha, {b"committer-time": str(t).encode()})
                           for sha, t in scope.commits.items()})
    commits = []
    for sha, subject in _subjects(top, scope):
        why = whys.get(sha, (None, False))[0]
        commits.append({"commit": sha, "subject": subject,
                        "run": why.run if why else None, "patch": why.patch if why else None})
    _whole, part = tally(top, scope.tip, explainer, infos, _touched(top, scope),
                         set(scope.commits))
    rels: dict[tuple[str, str], list[str]] = {}
    for rel in graph.relations:
        rels.setdefault((rel["from"], rel["rel"]), []).append(rel["to"])
    # a run whose pinned commit a squash or rebase rewrote explains lines, not commits
    by_commit = list(dict.fromkeys(c["run"] for c in commits if c["run"]))
    by_lines = [r for r in part.by_run if r not in by_commit]
    ran = by_commit + by_lines
    patches = list(dict.fromkeys([*(w.patch for w, _p in whys.values()),
                                  *(w.patch for w in explainer.pins.order
                                    if w.run in by_lines)]))
    out_runs = []
    for rid in sorted(ran, key=lambda r: (summaries[r].start or 0, r) if r in summaries
                      else (0, r)):
        s = summaries.get(rid)
        goal = next((w.goal for w, _p in whys.values() if w.run == rid and w.goal),
                    s.goal if s else None)
        goal_node = graph.node(goal) if goal else None
        info = infos.get(rid)
        out_runs.append({"run": rid, "agent": info.agent if info else None,
                         "model": info.model if info else None, "goal": goal,
                         "goal_title": label(goal_node) if goal_node else None,
                         "outcome": s.outcome if s else None,
                         "commits": sum(c["run"] == rid for c in commits),
                         "lines": part.by_run.get(rid, 0)})
    evals, decisions = [], []
    for pid in patches:
        for eid in _targets(graph, rels, pid, "validated_by"):
            props = graph.node(eid)["props"]
            evals.append({"eval": eid, "status": props.get("status"),
                          "command": props.get("command"), "patch": pid})
        for did in _targets(graph, rels, pid, "approved_by", "rejected_by"):
            props = graph.node(did)["props"]
            decisions.append({"decision": did, "status": props.get("status"),
                              "reason": props.get("reason"), "patch": pid})
    evals.sort(key=lambda e: _EVAL_ORDER.get(e["status"], 2))
    return {"base": scope.base, "head": scope.tip, "commits": commits, "runs": out_runs,
            "evals": evals, "decisions": decisions, "lines": part.to_json(),
            "by": {"agent": part.by_agent, "model": part.by_model}}
