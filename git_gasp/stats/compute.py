"""`git gasp stats` computed: the tree's lines (`lines`) and the activity (`activity`) of
one scope (`scope`), as the JSON docs/json.md describes."""

from __future__ import annotations

from typing import Any

from git_gasp.attribution.blame import Explainer
from git_gasp.attribution.porcelain import CommitInfo
from git_gasp.attribution.trace_import import Imported
from git_gasp.protocol.envelope import Event
from git_gasp.protocol.graph import Graph
from git_gasp.stats.activity import count, run_info, runs_of
from git_gasp.stats.lines import BY, Tally, tally, tree_files
from git_gasp.stats.scope import Scope


def _lines(t: Tally) -> dict[str, Any]:
    return {"lines": t.to_json(), "files": t.files,
            "by": {by: t.breakdown(by) for by in BY}, "sources": t.by_source}


def range_runs(explainer: Explainer, commits: dict[str, int]) -> dict[str, list[str]]:
    """The runs whose patches explain `commits` (blame's engine), each with its commits."""
    infos = {sha: CommitInfo(sha, {b"committer-time": str(when).encode()})
             for sha, when in commits.items()}
    out: dict[str, list[str]] = {}
    for sha, (why, _pinned) in explainer.whys(infos).items():
        if why.run is not None:
            out.setdefault(why.run, []).append(sha)
    return out


def compute(top: str, graph: Graph, events: list[Event], scope: Scope) -> dict[str, Any]:
    """The stats of `scope` in the repository whose work tree's top is `top`."""
    runs = runs_of(graph, events)
    infos = {r.id: run_info(r) for r in runs}
    explainer = Explainer(top, graph, Imported(graph))
    whole, part = tally(top, scope.tip, explainer, infos, tree_files(top, scope.tip),
                        set(scope.commits) if scope.commits is not None else None)
    run_scope = None
    if scope.since_ms is not None:
        run_scope = {r.id for r in runs if r.start is not None and r.start >= scope.since_ms}
    elif scope.commits is not None:
        run_scope = set(range_runs(explainer, scope.commits))
    act = count(graph, runs, run_scope)
    activity = {**act.to_json(), "by": {"agent": act.by_agent, "model": act.by_model,
                                        "person": act.by_person}}
    out: dict[str, Any] = {"rev": scope.tip, "scope": scope.label, "since_ms": scope.since_ms,
                           **_lines(whole), "activity": activity, "changed": None}
    if part is not None:
        out["changed"] = {"commits": len(scope.commits or {}), **_lines(part)}
    return out
