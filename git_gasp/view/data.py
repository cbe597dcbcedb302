"""The page's data: the folded graph's domain nodes and relations whole, the events
that made them (as rows: id, time, kind, actor and a line of its fields), and the
runs summarised (`view.runs`): the raw layer (model and tool calls, their nodes and
events) is counted per run, not copied, so 100,000 events stay a page of a few MB.

A scope (the events from an index or a time on, or one run's events) narrows the
events and the runs to it, and the nodes to those its events created or changed and
their neighbours; the graph is always the fold of the whole log.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from git_gasp.protocol.envelope import OPS_KIND, Event
from git_gasp.protocol.gcpause import gc_paused
from git_gasp.protocol.graph import Graph
from git_gasp.protocol.idmatch import GAP, abbreviations
from git_gasp.protocol.jsonstrict import dumps_canonical
from git_gasp.protocol.logcount import LogCount
from git_gasp.runtime.queries import label
from git_gasp.view.rowtext import fields_line, ops_line
from git_gasp.view.runs import RAW_NODE_KINDS, RunTable, is_raw_event

MAX_PROPS_BYTES = 8_000  # a node's props (as JSON) beyond this are trimmed
MAX_STRING = 2_000  # characters of one string kept when trimming
MAX_ITEMS = 100  # entries of one list or object kept when trimming
MISSING = "(missing)"  # the kind of a relation's endpoint that is not in the graph


def tail_length(full: str, short: str) -> int:
    """How many trailing characters of `full` its short form `kind_...tail` keeps (0:
    printed whole)."""
    if short == full:
        return 0
    return len(short) - short.index(GAP) - len(GAP)


def trim(value: Any, depth: int = 0) -> Any:
    """`value` with long strings, lists and objects cut (marked as cut)."""
    if isinstance(value, str):
        return value if len(value) <= MAX_STRING else \
            value[:MAX_STRING] + f"… ({len(value)} characters)"
    if depth > 8:
        return "…"
    if isinstance(value, dict):
        out = {k: trim(v, depth + 1) for k, v in list(value.items())[:MAX_ITEMS]}
        if len(value) > MAX_ITEMS:
            out["…"] = f"{len(value) - MAX_ITEMS} more keys"
        return out
    if isinstance(value, list):
        out_list = [trim(v, depth + 1) for v in value[:MAX_ITEMS]]
        if len(value) > MAX_ITEMS:
            out_list.append(f"… {len(value) - MAX_ITEMS} more")
        return out_list
    return value


def _fits(props: Any) -> Any:
    return props if len(dumps_canonical(props)) <= MAX_PROPS_BYTES else trim(props)


def ops_targets(payload: Any, raw: set[str] | frozenset[str] = frozenset(),
                subjects: set[str] | None = None) -> list[str]:
    """The node ids an ops payload touches (a relation touches both its ends), leaving
    out the ops on `raw` nodes and the relations with an end among them; the nodes its
    node ops change are added to `subjects`."""
    out: list[str] = []
    if type(payload) is not list:
        return out
    for op in payload:
        if type(op) is not dict or len(op) != 1:
            continue
        for body in op.values():
            if type(body) is not dict:
                break
            nid = body.get("id")
            if nid is not None:  # a node's op
                if type(nid) is str and nid not in raw:
                    out.append(nid)
                    if subjects is not None:
                        subjects.add(nid)
                break
            a, b = body.get("from"), body.get("to")  # a relation's
            if type(a) is str and type(b) is str and a not in raw and b not in raw:
                out += (a, b)
    return out


class _Rows:
    """The page's event rows: [id, tail, ts_ms, kind, actor, text] (`rowtext`)."""

    def __init__(self, event_short: dict[str, str]) -> None:
        self.rows: list[list[Any]] = []
        self.short = event_short

    def add(self, e: Event, text: str) -> int:
        self.rows.append([e.id, tail_length(e.id, self.short.get(e.id, e.id)), e.ts_ms, e.kind,
                          f"{e.actor_kind}:{e.actor_id}", text])
        return len(self.rows) - 1


def run_ids(graph: Graph, events: list[Event]) -> list[str]:
    """Every run of the log: its run nodes and the runs its run.started events name."""
    ids = dict.fromkeys(nid for nid, n in graph.nodes.items() if n["kind"] == "run")
    for e in events:
        if e.kind == "run.started" and isinstance(e.payload, dict) \
                and isinstance(e.payload.get("run_id"), str):
            ids.setdefault(e.payload["run_id"])
    return list(ids)


def build(graph: Graph, events: list[Event], *, agent: str, log: str, since_index: int = 0,
          since_ms: int | None = None, run: str | None = None,
          since_text: str | None = None) -> dict[str, Any]:
    """The page's data for the fold `graph` of `events`: scoped to the events from
    index `since_index` and at or after `since_ms`, and to run `run` (module doc)."""
    with gc_paused():  # many small acyclic lists over a heap of parsed events
        return _build(graph, events, agent=agent, log=log, since_index=since_index,
                      since_ms=since_ms, run=run, since_text=since_text)


def _build(graph: Graph, events: list[Event], *, agent: str, log: str, since_index: int,
           since_ms: int | None, run: str | None, since_text: str | None) -> dict[str, Any]:
    nodes = graph.nodes
    raw = {nid for nid, n in nodes.items() if n["kind"] in RAW_NODE_KINDS}
    runs = RunTable(nodes)
    event_short = abbreviations(e.id for e in events)
    rows = _Rows(event_short)
    touched: dict[str, list[int]] = {}
    domain_row: dict[str, int] = {}
    run_rows: dict[str, list[int]] = {}
    raw_events = 0
    scoped = since_index > 0 or since_ms is not None or run is not None
    inside_runs: set[str] = set()
    subjects: set[str] = set()  # the nodes the scope's events create or change
    for i, e in enumerate(events):
        rid = runs.see(e)
        inside = i >= since_index and (since_ms is None or e.ts_ms >= since_ms) \
            and (run is None or rid == run)
        if inside and rid is not None:
            inside_runs.add(rid)
        kind = e.kind
        if kind == OPS_KIND:
            targets = ops_targets(e.payload, raw, subjects if inside else None)
            if not targets:
                raw_events += 1
                continue
            if not inside:
                continue
            row = rows.add(e, ops_line(e.payload))
            cause = domain_row.get(e.causation_id or "")
            for t in dict.fromkeys(targets):
                seen = touched.setdefault(t, [])
                if cause is not None and cause not in seen[-4:]:
                    seen.append(cause)
                seen.append(row)
        elif is_raw_event(kind):
            raw_events += 1
        elif inside:
            row = rows.add(e, fields_line(e.payload))
            domain_row[e.id] = row
            p = e.payload
            pid = p.get("id") if isinstance(p, dict) else None
            if isinstance(pid, str) and pid in nodes and pid not in raw:
                touched.setdefault(pid, []).append(row)
                subjects.add(pid)
            if rid is not None:
                run_rows.setdefault(rid, []).append(row)
    summaries = [r for r in runs.finish() if not scoped or r.id in inside_runs]
    keep = _scope(graph, raw, subjects, summaries, scoped=scoped)
    node_short = abbreviations([*nodes, *(r.id for r in runs.runs.values())])
    out_nodes, index = _nodes(graph, keep, touched, node_short)
    rels, dropped = _relations(graph, index, out_nodes, raw)
    out_runs = []
    for r in summaries:
        r.rows = run_rows.get(r.id, [])
        rec = r.to_json()
        rec["t"] = tail_length(r.id, node_short.get(r.id, r.id))
        rec["node"] = index.get(r.id, -1)
        rec["goal"] = index.get(r.goal or "", -1)
        out_runs.append(rec)
        if rec["node"] >= 0:
            out_nodes[rec["node"]]["run"] = len(out_runs) - 1
    count = LogCount(events, len(nodes))

    def short(eid: str) -> str:  # as log prints it
        return event_short.get(eid, eid)

    return {
        "agent": agent, "log": log, "count": dict(count.to_json(short), text=count.phrase(short)),
        "events": len(events), "raw_events": raw_events,
        "raw_nodes": len(raw), "dropped_relations": dropped,
        "last_event": events[-1].id if events else None,
        "scope": {"since": since_text, "run": run},
        "nodes": out_nodes, "rels": rels, "runs": out_runs, "rows": rows.rows,
    }


def _scope(graph: Graph, raw: set[str], subjects: set[str], summaries: list, *,
           scoped: bool) -> list[str]:
    """The node ids the page holds: every domain node, or (scoped) those the scope's
    events created or changed, its runs' nodes, and their neighbours."""
    nodes = graph.nodes
    if not scoped:
        return [nid for nid in nodes if nid not in raw]
    core = {nid for nid in subjects if nid in nodes}
    core.update(r.id for r in summaries if r.id in nodes)
    near = set(core)
    for rel in graph.relations:
        a, b = rel["from"], rel["to"]
        if a in core and b in nodes:
            near.add(b)
        elif b in core and a in nodes:
            near.add(a)
    return [nid for nid in nodes if nid in near and nid not in raw]


def _node(nid: str, node: dict, evs: list[int], tail: int) -> dict[str, Any]:
    props = node["props"]
    status = props.get("status")
    rec: dict[str, Any] = {"id": nid, "t": tail, "k": node["kind"], "l": label(node),
                           "s": status if isinstance(status, str) else "",
                           "p": _fits(props), "e": sorted(evs)}
    if node.get("stale"):
        rec["stale"] = True
    if node.get("tombstoned"):
        rec["tomb"] = True
    if node.get("artifacts"):
        rec["a"] = _fits(node["artifacts"])
    return rec


def _nodes(graph: Graph, keep: Iterable[str], touched: dict[str, list[int]],
           short: dict[str, str]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    nodes = graph.nodes
    out: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    for nid in keep:
        index[nid] = len(out)
        out.append(_node(nid, nodes[nid], touched.get(nid, []),
                         tail_length(nid, short.get(nid, nid))))
    return out, index


def _relations(graph: Graph, index: dict[str, int], out_nodes: list[dict[str, Any]],
               raw: set[str]) -> tuple[list[list[Any]], int]:
    """[from, rel, to, props] between the page's nodes (an end missing from the graph
    becomes a `(missing)` node); the count of those left out (raw-layer ends)."""
    nodes = graph.nodes
    rels: list[list[Any]] = []
    dropped = 0
    for r in graph.relations:
        a, b = r["from"], r["to"]
        if a in raw or b in raw:
            dropped += 1
            continue
        ends = []
        for end in (a, b):
            k = index.get(end)
            if k is None and end not in nodes:  # dangling: shown as a missing node
                k = index[end] = len(out_nodes)
                out_nodes.append({"id": end, "t": 0, "k": MISSING, "l": "", "s": "", "p": {},
                                  "e": [], "missing": True})
            ends.append(k)
        if ends[0] is None or ends[1] is None:  # an end outside the scope
            continue
        props = r.get("props") or 0
        rels.append([ends[0], r["rel"], ends[1], _fits(props) if props else 0])
    return rels, dropped
