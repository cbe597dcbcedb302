"""`gasp_search`: the nodes whose text matches a query, newest first.

A node's text is its id and its string properties (title, summary, statement, reason,
command, task, tool, model, …). Every word of the query must occur in it, ignoring case;
`kinds` narrows the node kinds (default: the work and its evidence, `DEFAULT_KINDS`),
`status` the status (ignoring case).
"""

from __future__ import annotations

from typing import Any

from git_gasp.base.errors import UsageError
from git_gasp.mcp.adjacency import Texts
from git_gasp.protocol.graph import Graph
from git_gasp.runtime.queries import label

DEFAULT_KINDS = ("goal", "task", "run", "patch", "eval", "decision", "failure", "observation",
                 "hypothesis")
MAX_LIMIT = 200
DEFAULT_LIMIT = 20


def check_limit(limit: object, default: int = DEFAULT_LIMIT) -> int:
    """`limit` as a count from 1 to MAX_LIMIT (None: `default`)."""
    if limit is None:
        return default
    if type(limit) is not int or not 1 <= limit <= MAX_LIMIT:
        raise UsageError(f"limit must be a whole number from 1 to {MAX_LIMIT}, not {limit!r}")
    return limit


def node_text(node: dict) -> str:
    """The id and the string properties of `node`, lower-cased, for matching."""
    parts = [node["id"]]
    parts += [v for v in node["props"].values() if isinstance(v, str)]
    return "\n".join(parts).lower()


def brief(node: dict) -> dict[str, Any]:
    """A node as a search or queue result: id, kind, status, label."""
    return {"id": node["id"], "kind": node["kind"], "status": node["props"].get("status"),
            "label": label(node)}


def search(graph: Graph, query: str, kinds: list[str] | None = None,
           status: str | None = None, limit: int | None = None,
           known_kinds: frozenset[str] | None = None,
           texts: Texts | None = None) -> dict[str, Any]:
    """The matching nodes (newest first) and whether there were more than `limit`
    (`texts`: the nodes' search texts the caller keeps between calls)."""
    words = query.lower().split() if isinstance(query, str) else []
    if not words:
        raise UsageError("query must hold at least one word")
    limit = check_limit(limit)
    if kinds is not None:
        unknown = sorted(set(kinds) - set(known_kinds or kinds))
        if unknown:
            raise UsageError(f"unknown node kind {unknown[0]!r} (known: "
                             f"{', '.join(sorted(known_kinds or ()))})")
    wanted = set(kinds) if kinds else set(DEFAULT_KINDS)
    want_status = status.lower() if isinstance(status, str) and status else None
    hits: list[dict[str, Any]] = []
    more = False
    for node_id in reversed(list(graph.node_ids())):
        node = graph.node(node_id)
        if node is None or node["kind"] not in wanted or node.get("tombstoned"):
            continue
        if want_status is not None and str(node["props"].get("status", "")).lower() \
                != want_status:
            continue
        text = texts.of(node) if texts is not None else node_text(node)
        if all(w in text for w in words):
            if len(hits) == limit:
                more = True
                break
            hits.append(brief(node))
    return {"query": query, "results": hits, "more": more}
