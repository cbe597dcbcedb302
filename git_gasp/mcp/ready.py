"""`gasp_ready`: the work queue, open goals and tasks that nothing holds back.

A goal or task is ready when its status is open (Open, Active, InProgress, or none),
no live node ``blocks`` it, nothing it ``depends_on`` is still live, and no Promoted
patch ``advances`` it (the promoted patch closed it, whatever its status says). A node
is live while it is not tombstoned and its status is not a final one of its lifecycle
(`runtime.transitions`). Oldest first, as a queue.
"""

from __future__ import annotations

from typing import Any

from git_gasp.mcp.search import brief, check_limit
from git_gasp.protocol.graph import Graph
from git_gasp.runtime.transitions import TRANSITIONS

OPEN = frozenset({"open", "active", "inprogress"})
WORK = ("goal", "task")
DEFAULT_LIMIT = 50


def live(node: dict | None) -> bool:
    """Whether `node` still holds work back (see the module doc)."""
    if node is None or node.get("tombstoned"):
        return False
    table = TRANSITIONS.get(node["kind"])
    status = node["props"].get("status")
    if table is None or not isinstance(status, str):
        return True
    return status.lower() in {s.lower() for s in table}


def ready(graph: Graph, limit: int | None = None) -> dict[str, Any]:
    """The ready goals and tasks, and those held back (with what holds each)."""
    limit = check_limit(limit, DEFAULT_LIMIT)
    held: dict[str, list[str]] = {}
    closed: dict[str, str] = {}
    serves: dict[str, list[str]] = {}
    for r in graph.relations:
        rel, src, dst = r["rel"], r["from"], r["to"]
        if rel == "blocks" and live(graph.node(src)):
            held.setdefault(dst, []).append(src)
        elif rel == "depends_on" and live(graph.node(dst)):
            held.setdefault(src, []).append(dst)
        elif rel == "advances":
            patch = graph.node(src)
            if patch is not None and patch["kind"] == "patch" \
                    and patch["props"].get("status") == "Promoted":
                closed.setdefault(dst, src)
        elif rel == "serves":
            serves.setdefault(src, []).append(dst)
    out: list[dict[str, Any]] = []
    blocked: list[dict[str, Any]] = []
    more = False
    for node_id in graph.node_ids():
        node = graph.node(node_id)
        if node is None or node["kind"] not in WORK or node.get("tombstoned"):
            continue
        status = node["props"].get("status")
        if status is not None and str(status).lower() not in OPEN or node_id in closed:
            continue
        item = brief(node)
        if node_id in serves:
            item["serves"] = serves[node_id]
        if node_id in held:
            blocked.append(dict(item, blocked_by=held[node_id]))
        elif len(out) == limit:
            more = True
        else:
            out.append(item)
    return {"ready": out, "more": more, "blocked": blocked[:limit]}
