"""`gasp_ready`: the work queue, open goals and tasks that nothing holds back.

A goal or task is ready when its status is open (Open, Active, InProgress, or none),
no live node ``blocks`` it, nothing it ``depends_on`` is still live, and no Promoted
patch ``advances`` it (the promoted patch closed it, whatever its status says). A node
is live while it is not tombstoned and its status is not a final one of its lifecycle
(`runtime.transitions`). Oldest first, as a queue.
"""

from __future__ import annotations

from typing import Any

from git_gasp.mcp.adjacency import Adjacency
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


def ready(graph: Graph, limit: int | None = None,
          index: Adjacency | None = None) -> dict[str, Any]:
    """The ready goals and tasks, and those held back (with what holds each);
    `index`: the graph's relations by node, when the caller keeps them."""
    limit = check_limit(limit, DEFAULT_LIMIT)
    index = (index or Adjacency()).update(graph)
    out: list[dict[str, Any]] = []
    blocked: list[dict[str, Any]] = []
    more = False
    for node_id in graph.node_ids():
        node = graph.node(node_id)
        if node is None or node["kind"] not in WORK or node.get("tombstoned"):
            continue
        status = node["props"].get("status")
        if status is not None and str(status).lower() not in OPEN:
            continue
        incoming = index.in_by.get(node_id, ())
        if any(r["rel"] == "advances" and _promoted(graph.node(r["from"])) for r in incoming):
            continue  # a promoted patch closed it
        held = [r["from"] for r in incoming
                if r["rel"] == "blocks" and live(graph.node(r["from"]))]
        outgoing = index.out_by.get(node_id, ())
        held += [r["to"] for r in outgoing
                 if r["rel"] == "depends_on" and live(graph.node(r["to"]))]
        item = brief(node)
        serves = [r["to"] for r in outgoing if r["rel"] == "serves"]
        if serves:
            item["serves"] = serves
        if held:
            blocked.append(dict(item, blocked_by=held))
        elif len(out) == limit:
            more = True
        else:
            out.append(item)
    return {"ready": out, "more": more, "blocked": blocked[:limit]}


def _promoted(node: dict | None) -> bool:
    return node is not None and node["kind"] == "patch" \
        and node["props"].get("status") == "Promoted"
