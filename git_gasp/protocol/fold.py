"""The reducer: fold `state.ops_applied` events, in line order, into a Graph.

Lenient fold skips an op that is malformed or needs a missing node and reports it
with its event id and line; strict fold raises FoldError on the first such op.
Folding never mutates the events it reads (nested props are copied on write).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from git_gasp.base.errors import FormatError
from git_gasp.base.record import Record
from git_gasp.protocol.envelope import OPS_KIND, Event
from git_gasp.protocol.gcpause import gc_paused
from git_gasp.protocol.graph import Graph
from git_gasp.protocol.ops import NEEDS_NODE, OpError, parse_op


class SkippedOp(Record):
    """An op the lenient fold could not apply: `index` is its 1-based position in the
    event's payload (0: the whole payload); `missing_node` is True when the op is well
    formed but names a node that was never created (the reference checker and
    yoagent-state >= 0.5.1 skip such an op and note it)."""

    FIELDS = ("event_id", "line", "index", "reason", "missing_node")

    def __init__(self, event_id: str, line: int, index: int, reason: str,
                 missing_node: bool = False) -> None:
        self.event_id, self.line, self.index, self.reason = event_id, line, index, reason
        self.missing_node = missing_node

    def describe(self, show: Callable[[str], str] = str) -> str:
        """One line: the op, its event (as `show` prints the id) and why it was skipped."""
        where = f"op #{self.index} of " if self.index else ""
        return f"{where}event {show(self.event_id)} (line {self.line}): {self.reason}"


class FoldError(FormatError):
    """Raised by the strict fold; carries the SkippedOp that stopped it."""

    def __init__(self, skipped: SkippedOp) -> None:
        super().__init__(skipped.describe())
        self.skipped = skipped


class FoldResult(Record):
    """A folded graph, the ops it skipped, and the last event folded."""

    FIELDS = ("graph", "skipped", "last_event_id")

    def __init__(self, graph: Graph, skipped: list[SkippedOp] | None = None,
                 last_event_id: str | None = None) -> None:
        self.graph = graph
        self.skipped = [] if skipped is None else skipped
        self.last_event_id = last_event_id


def _merge(dst: dict, src: dict) -> dict:
    """Deep-merge src into a copy of dst: objects merge, anything else replaces."""
    out = dict(dst)
    for key, value in src.items():
        old = out.get(key)
        if type(value) is dict and type(old) is dict:
            out[key] = _merge(old, value)
        else:
            out[key] = value
    return out


def missing_node_reason(tag: str, node_id: str) -> str:
    """Why an op of a `NEEDS_NODE` kind is skipped when its node was never created."""
    return f"{tag} targets node {node_id!r}, which does not exist"


def apply_op(graph: Graph, tag: str, body: dict) -> str | None:
    """Apply one validated op; return a reason instead when it needs a missing node."""
    if tag in NEEDS_NODE:
        node = graph.node(body["id"])
        if node is None:
            return missing_node_reason(tag, body["id"])
        if tag == "UpdateNode":
            node["props"] = _merge(node["props"], body["props"])
        elif tag == "TombstoneNode":
            node["tombstoned"] = True
            node["props"] = {**node["props"], "tombstone_reason": body["reason"]}
        elif tag == "MarkStale":
            node["stale"] = True
            node["props"] = {**node["props"], "stale_reason": body["reason"]}
        else:  # AttachArtifact
            node["artifacts"].append(body["artifact"])
    elif tag == "CreateNode":
        graph.put_node(body["id"], {
            "id": body["id"],
            "kind": body["kind"],
            "props": body["props"],
            "stale": False,
            "tombstoned": False,
            "artifacts": [],
        })
    elif tag == "CreateRelation":
        graph.add_relation(
            {"from": body["from"], "rel": body["rel"], "to": body["to"], "props": body["props"]}
        )
    else:  # DeleteRelation
        src, rel, dst = body["from"], body["rel"], body["to"]
        graph.relations = [
            r
            for r in graph.relations
            if not (r["from"] == src and r["rel"] == rel and r["to"] == dst)
        ]
    graph.version += 1
    return None


def fold(
    events: Iterable[Event], *, strict: bool = False, graph: Graph | None = None
) -> FoldResult:
    """Fold events into `graph` (a fresh one by default) in order."""
    with gc_paused():
        return _fold(events, strict, graph)


def _fold(events: Iterable[Event], strict: bool, graph: Graph | None) -> FoldResult:
    result = FoldResult(graph if graph is not None else Graph())
    g = result.graph
    skipped = result.skipped
    last = None
    for event in events:
        last = event
        if event.kind != OPS_KIND:
            continue
        payload: Any = event.payload
        if type(payload) is not list:
            miss = SkippedOp(event.id, event.line, 0, "payload must be an array of ops")
            if strict:
                raise FoldError(miss)
            skipped.append(miss)
            continue
        for index, op in enumerate(payload):
            missing = False
            try:
                tag, body = parse_op(op)
            except OpError as exc:
                reason: str | None = str(exc)
            else:
                reason = apply_op(g, tag, body)
                missing = reason is not None
            if reason is not None:
                miss = SkippedOp(event.id, event.line, index + 1, reason, missing)
                if strict:
                    raise FoldError(miss)
                skipped.append(miss)
    if last is not None:
        result.last_event_id = last.id
    return result
