"""Read-side queries over a folded Graph: lineage, skill track record, diff, fold at."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from git_gasp.base.errors import GaspError
from git_gasp.base.git import resolve_commit
from git_gasp.odb.database import ObjectDatabase
from git_gasp.odb.objects import ObjectError
from git_gasp.odb.repo import open_repo
from git_gasp.protocol.envelope import parse_log
from git_gasp.protocol.fold import fold
from git_gasp.protocol.graph import Graph
from git_gasp.protocol.idmatch import match_id
from git_gasp.protocol.jsonstrict import json_equal
from git_gasp.store.agent import load_agent
from git_gasp.store.logview import fold_agent

_LABEL_KEYS = ("title", "summary", "statement", "command", "reason", "task", "tool", "model")


def label(node: dict) -> str:
    props = node["props"]
    for key in _LABEL_KEYS:
        value = props.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


@dataclass
class Edge:
    src: str
    rel: str
    dst: str
    props: dict


@dataclass
class Lineage:
    """The why-chain around a node: every node within `depth` hops, either direction."""

    root: str
    depth: int
    nodes: dict[str, dict] = field(default_factory=dict)  # id -> node, in discovery order
    hops: dict[str, int] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    via: dict[str, int] = field(default_factory=dict)  # node -> edge that discovered it

    def to_json(self) -> dict:
        return {
            "root": self.root,
            "depth": self.depth,
            "nodes": [{"id": n["id"], "kind": n["kind"], "status": n["props"].get("status"),
                       "label": label(n), "hops": self.hops[n["id"]]}
                      for n in self.nodes.values()],
            "edges": [{"from": e.src, "rel": e.rel, "to": e.dst, "props": e.props}
                      for e in self.edges],
        }

    def _line(self, node_id: str, show: Callable[[str], str]) -> str:
        node = self.nodes[node_id]
        status = node["props"].get("status")
        bits = [node["kind"]] + ([str(status)] if status is not None else [])
        text = label(node)
        return f"`{show(node_id)}` ({', '.join(bits)})" + (f" — {text}" if text else "")

    def to_markdown(self, show: Callable[[str], str] = str) -> str:
        """The root, then a nested list following the breadth-first discovery tree:
        `—rel→ x` is an outgoing relation, `←rel— x` an incoming one; relations between
        nodes already shown are listed at the end. `show` prints an id (the CLI: short)."""
        children: dict[str, list[tuple[int, str]]] = {}
        for node_id, idx in self.via.items():
            e = self.edges[idx]
            parent = e.src if e.dst == node_id else e.dst
            children.setdefault(parent, []).append((idx, node_id))
        lines = [f"# Lineage of {self._line(self.root, show)}", ""]
        stack = [(self.root, 0)]
        order: list[tuple[str, int]] = []
        while stack:
            node_id, level = stack.pop()
            order.append((node_id, level))
            for _idx, child in sorted(children.get(node_id, []), reverse=True):
                stack.append((child, level + 1))
        for node_id, level in order[1:]:
            e = self.edges[self.via[node_id]]
            arrow = f"—{e.rel}→" if e.dst == node_id else f"←{e.rel}—"
            lines.append("  " * (level - 1) + f"- {arrow} {self._line(node_id, show)}")
        tree = set(self.via.values())
        others = [e for i, e in enumerate(self.edges) if i not in tree]
        if others:
            lines += ["", "Also:"]
            lines += [f"- `{show(e.src)}` —{e.rel}→ `{show(e.dst)}`" for e in others]
        if len(lines) == 2:
            lines.append("(no relations)")
        return "\n".join(lines) + "\n"


def lineage(graph: Graph, node_id: str, depth: int = 3,
            index: tuple[dict[str, list[dict]], dict[str, list[dict]]] | None = None,
            ) -> Lineage:
    """Breadth-first over relations in both directions, up to `depth` hops. `index`:
    the relations by source and by target, when the caller keeps them (else built)."""
    if not graph.has_node(node_id):
        raise GaspError(f"no node {node_id!r} in the graph")
    if depth < 0:
        raise GaspError("depth must be 0 or more")
    if index is None:
        out_by: dict[str, list[dict]] = {}
        in_by: dict[str, list[dict]] = {}
        for r in graph.relations:
            out_by.setdefault(r["from"], []).append(r)
            in_by.setdefault(r["to"], []).append(r)
    else:
        out_by, in_by = index
    result = Lineage(node_id, depth)
    result.nodes[node_id] = graph.node(node_id)
    result.hops[node_id] = 0
    seen_edges: set[int] = set()
    queue = deque([node_id])
    while queue:
        current = queue.popleft()
        hop = result.hops[current]
        if hop >= depth:
            continue
        for r in out_by.get(current, []) + in_by.get(current, []):
            if id(r) in seen_edges:
                continue
            other = r["to"] if r["from"] == current else r["from"]
            if not graph.has_node(other):
                continue
            seen_edges.add(id(r))
            result.edges.append(Edge(r["from"], r["rel"], r["to"], r.get("props", {})))
            if other not in result.nodes:
                result.via[other] = len(result.edges) - 1
                result.nodes[other] = graph.node(other)
                result.hops[other] = hop + 1
                queue.append(other)
    return result


@dataclass
class TrackRecord:
    """A skill's record folded from its patches + evals + decisions."""

    skill: str
    patches: int = 0
    promoted: int = 0
    rejected: int = 0
    evals: int = 0
    passed: int = 0
    outcomes: list[bool] = field(default_factory=list)  # eval pass/fail in log order

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.evals if self.evals else None

    @property
    def trend(self) -> str:
        """Pass rate of the recent half against the earlier half (needs 4+ evals)."""
        n = len(self.outcomes)
        if n < 4:
            return "insufficient data"
        half = n // 2
        early = sum(self.outcomes[:half]) / half
        late = sum(self.outcomes[n - half:]) / half
        if late - early > 0.1:
            return "improving"
        if early - late > 0.1:
            return "declining"
        return "steady"

    def to_json(self) -> dict:
        return {"skill": self.skill, "patches": self.patches, "promoted": self.promoted,
                "rejected": self.rejected, "sample_size": self.evals, "passed": self.passed,
                "pass_rate": self.pass_rate, "trend": self.trend}


def _patch_skill(graph: Graph, node: dict) -> str | None:
    skill = node["props"].get("skill")
    if isinstance(skill, str):
        return skill
    for r in graph.outgoing(node["id"], "modifies"):
        target = graph.nodes.get(r["to"])
        if target is not None and isinstance(target["props"].get("name"), str):
            return target["props"]["name"]
    return None


def track_record(graph: Graph, skill: str) -> TrackRecord:
    """Patches pinned to `skill` (prop `skill`), the evals validating them, the decisions."""
    rec = TrackRecord(skill)
    for node in graph.nodes.values():
        if node["kind"] != "patch" or node["tombstoned"] or _patch_skill(graph, node) != skill:
            continue
        rec.patches += 1
        status = str(node["props"].get("status", ""))
        rec.promoted += status == "Promoted"
        rec.rejected += status == "Rejected"
        for r in graph.outgoing(node["id"], "validated_by"):
            ev = graph.nodes.get(r["to"])
            if ev is None:
                continue
            ok = str(ev["props"].get("status", "")).lower() == "passed"
            rec.evals += 1
            rec.passed += ok
            rec.outcomes.append(ok)
    return rec


@dataclass
class GraphDiff:
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> field -> (a, b)
    relations_added: list[dict] = field(default_factory=list)
    relations_removed: list[dict] = field(default_factory=list)

    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed or self.relations_added
                    or self.relations_removed)

    def to_json(self) -> dict:
        return {"nodes_added": self.added, "nodes_removed": self.removed,
                "nodes_changed": {k: {f: {"a": a, "b": b} for f, (a, b) in v.items()}
                                  for k, v in self.changed.items()},
                "relations_added": self.relations_added,
                "relations_removed": self.relations_removed}

    def lines(self) -> list[str]:
        out = []
        out += [f"+ node {n}" for n in self.added]
        out += [f"- node {n}" for n in self.removed]
        for nid, fields in self.changed.items():
            for name, (a, b) in fields.items():
                out.append(f"~ node {nid} {name}: {_short(a)} -> {_short(b)}")
        for r in self.relations_added:
            out.append(f"+ {r['from']} -{r['rel']}-> {r['to']}" + _props(r))
        for r in self.relations_removed:
            out.append(f"- {r['from']} -{r['rel']}-> {r['to']}" + _props(r))
        return out or ["no differences"]


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


def _props(r: dict) -> str:
    return f" {_short(r['props'])}" if r.get("props") else ""


def _rel_key(r: dict) -> str:
    return json.dumps([r["from"], r["rel"], r["to"], r.get("props", {})], sort_keys=True)


def diff_graphs(a: Graph, b: Graph) -> GraphDiff:
    """Nodes added/removed/changed (props key by key, flags, artifacts) and relations
    added/removed, a relation's props being part of its identity."""
    out = GraphDiff()
    out.added = [n for n in b.nodes if n not in a.nodes]
    out.removed = [n for n in a.nodes if n not in b.nodes]
    for nid in a.nodes.keys() & b.nodes.keys():
        na, nb = a.nodes[nid], b.nodes[nid]
        fields: dict[str, Any] = {}
        for key in ("kind", "stale", "tombstoned", "artifacts"):
            if not json_equal(na.get(key), nb.get(key)):
                fields[key] = (na.get(key), nb.get(key))
        pa, pb = na["props"], nb["props"]
        for key in sorted(pa.keys() | pb.keys()):
            if key not in pa or key not in pb or not json_equal(pa[key], pb[key]):
                fields[f"props.{key}"] = (pa.get(key), pb.get(key))
        if fields:
            out.changed[nid] = fields
    out.changed = dict(sorted(out.changed.items()))
    count_a: dict[str, int] = {}
    for r in a.relations:
        count_a[_rel_key(r)] = count_a.get(_rel_key(r), 0) + 1
    for r in b.relations:
        key = _rel_key(r)
        if count_a.get(key, 0):
            count_a[key] -= 1
        else:
            out.relations_added.append(r)
    remaining = dict(count_a)
    for r in a.relations:
        key = _rel_key(r)
        if remaining.get(key, 0):
            remaining[key] -= 1
            out.relations_removed.append(r)
    return out


def fold_at(root: Path, ref: str | None = None) -> Graph:
    """The graph at an event id of the current log, or at a git revision (branch,
    tag, commit) whose committed log is folded; None/"" means the working tree."""
    if not ref:
        return fold_agent(Path(root)).result.graph
    repo = load_agent(Path(root))
    data = repo.log_bytes or b""
    if f'{{"id":"{ref}",'.encode() in data or any(e.id == ref for e in repo.parsed.events):
        return fold_agent(Path(root), at=ref).result.graph
    # A prefix with its kind (`event_0190ab`) is an event's; a bare one (`0190ab`) only
    # when git knows no such revision (an abbreviated commit id comes first, as in git).
    if "_" in ref or ref.startswith("-") or resolve_commit(Path(root), ref) is None:
        full = match_id((e.id for e in repo.parsed.events), ref, "event")
        if full != ref:
            return fold_agent(Path(root), at=full).result.graph
    return fold_revision(Path(root), ref, repo.log_rel)


def read_at_revision(root: Path, rev: str, rel: str) -> bytes:
    """The bytes of `rel` (relative to the agent root) at git revision `rev`."""
    sha = resolve_rev(Path(root), rev)
    repo, prefix = open_repo(Path(root))
    with repo:
        path = (prefix + b"/" if prefix else b"") + rel.encode()
        odb = ObjectDatabase(repo.object_store)
        try:
            _mode, blob = odb.lookup(odb.commit(sha).tree, path)
            return odb.blob(blob)
        except KeyError:
            raise GaspError(f"{rel} does not exist at {rev}") from None
        except ObjectError as exc:
            raise GaspError(f"{rel} at {rev}: {exc}") from None


def resolve_rev(root: Path, rev: str) -> bytes:
    """The commit id of any git revision (`main`, `HEAD~2`, a tag, an abbreviated id)."""
    if rev.startswith("-"):
        raise GaspError(f"{rev!r} is not a revision")
    sha = resolve_commit(root, rev)
    if sha is None:
        raise GaspError(f"{rev!r} is neither an event id in the log nor a git revision")
    return sha.encode()


def fold_revision(root: Path, rev: str, rel: str) -> Graph:
    parsed = parse_log(read_at_revision(root, rev, rel))
    if parsed.errors:
        first = parsed.errors[0]
        raise GaspError(f"{rel}:{first.line} at {rev}: {first.message}")
    return fold(parsed.events).graph
