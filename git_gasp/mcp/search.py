"""`gasp_search`: the nodes whose events match a query, best first.

The search is `protocol.logsearch.search_log` over the log (the engine `git gasp search`
runs too): every word of the query must occur in an event's text, ignoring case; each
hit names the node it is about, given once (its best event), with that event's id,
line and run. `kinds` narrows the node kinds (default: the work and its evidence,
`DEFAULT_KINDS`), `status` the node's status now (ignoring case); `run`, `agent`,
`person` and `since_ms` narrow the events as `git gasp search` does.
"""

from __future__ import annotations

import os
from typing import Any

from git_gasp.base.errors import UsageError
from git_gasp.base.files import map_regular_file
from git_gasp.protocol.logsearch import check_kinds, query_words, search_log
from git_gasp.runtime.queries import label
from git_gasp.runtime.state import AgentState

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


def brief(node: dict) -> dict[str, Any]:
    """A node as a search or queue result: id, kind, status, label."""
    return {"id": node["id"], "kind": node["kind"], "status": node["props"].get("status"),
            "label": label(node)}


def search(state: AgentState, query: str, kinds: list[str] | None = None,
           status: str | None = None, limit: int | None = None, *, run: str | None = None,
           agent: str | None = None, person: str | None = None,
           since_ms: int | None = None) -> dict[str, Any]:
    """The matching nodes (best first) of `state`'s log and whether there were more than
    `limit`."""
    query_words(query)
    limit = check_limit(limit)
    if since_ms is not None and type(since_ms) is not int:
        raise UsageError(f"since_ms must be epoch milliseconds, not {since_ms!r}")
    check_kinds(kinds, state.vocab.node_kinds)
    wanted = set(kinds) if kinds else set(DEFAULT_KINDS)
    want_status = status.lower() if isinstance(status, str) and status else None
    graph = state.graph

    def usable(node_id: str) -> dict | None:
        node = graph.node(node_id)
        if node is None or node.get("tombstoned") or node["kind"] not in wanted:
            return None
        if want_status is not None and \
                str(node["props"].get("status", "")).lower() != want_status:
            return None
        return node

    log = map_regular_file(os.path.join(state.root, state.store.rel), root=state.root) \
        if state.store.check_path() else None
    try:  # enough hits for limit + 1 nodes: whether there are more
        hits = search_log(log or b"", query, kinds=wanted, run=run, agent=agent,
                          person=person, since_ms=since_ms, limit=limit + 1,
                          keep=lambda h: any(usable(n) for n in h.nodes),
                          key=lambda h: next(n for n in h.nodes if usable(n)),
                          known=(state.store.size, state.store.line_count))
    finally:
        if log is not None:
            log.close()
    results: list[dict[str, Any]] = []
    seen: set[str] = set()
    for hit in hits:
        for node_id in hit.nodes:
            node = usable(node_id) if node_id not in seen else None
            seen.add(node_id)
            if node is None:
                continue
            if len(results) == limit:
                return {"query": query, "results": results, "more": True}
            results.append({**brief(node), "event": hit.event.id, "line": hit.line,
                            "run": hit.run})
    return {"query": query, "results": results, "more": False}
