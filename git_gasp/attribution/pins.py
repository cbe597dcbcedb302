"""What the fold says of commits: the patches that pin them and, for each patch, its
run, the goal it advances, the eval that validated it and the decision on it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from git_gasp.protocol.graph import Graph

_HEX = re.compile(r"[0-9a-f]{4,64}")
_RELS = ("advances", "produced_by", "validated_by", "approved_by", "rejected_by", "serves")



@dataclass
class Why:
    """A patch and what the fold ties to it (ids; None where there is none)."""

    patch: str
    pin: str
    goal: str | None = None
    run: str | None = None
    eval: str | None = None
    decision: str | None = None
    status: str | None = None
    run_started_ms: int | None = None
    person: str | None = None  # who ran the run (its metadata.person)

    def ids(self) -> dict[str, str | None]:
        return {"patch": self.patch, "goal": self.goal, "run": self.run, "eval": self.eval,
                "decision": self.decision}


def _pins_of(node: dict) -> list[str]:
    """The commits a patch node pins: references_commit and git_commit artifacts."""
    found: list[str] = []
    ref = node["props"].get("references_commit")
    if isinstance(ref, str):
        found.append(ref)
    for art in node.get("artifacts") or ():
        if not isinstance(art, dict):
            continue
        uri, digest = art.get("uri"), art.get("hash")
        if art.get("kind") in ("git_commit", "commit") and isinstance(digest, str):
            found.append(digest)
        elif isinstance(uri, str) and uri.startswith("git:"):
            found.append(uri[4:])
    out: list[str] = []
    for pin in found:
        pin = pin.strip().lower()
        if _HEX.fullmatch(pin) and pin not in out:
            out.append(pin)
    return out


class Pins:
    """Every patch of `graph` that pins a commit, and the way from a commit to it."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        out: dict[str, dict[str, list[str]]] = {}
        for rel in graph.relations:
            if rel["rel"] in _RELS:
                out.setdefault(rel["from"], {}).setdefault(rel["rel"], []).append(rel["to"])
        self._out = out
        self.full: dict[str, Why] = {}  # a full commit id -> its patch
        self.short: dict[str, Why] = {}  # an abbreviated pin -> its patch
        self.order: list[Why] = []  # every pinned patch, in the fold's node order
        for node in graph.iter_nodes():
            if node.get("kind") != "patch" or node.get("tombstoned"):
                continue
            for pin in _pins_of(node):
                why = self._why(node, pin)
                self.order.append(why)
                table = self.full if len(pin) in (40, 64) else self.short
                if pin not in table or _rank(why) >= _rank(table[pin]):
                    table[pin] = why  # a later patch (or a promoted one) wins

    def _last(self, node_id: str, *rels: str) -> str | None:
        outs = self._out.get(node_id, {})
        for rel in rels:
            for target in reversed(outs.get(rel, ())):
                if self.graph.has_node(target):
                    return target
        return None

    def _why(self, node: dict, pin: str) -> Why:
        pid = node["id"]
        run = self._last(pid, "produced_by")
        goal = self._last(pid, "advances")
        started = person = None
        if run is not None:
            props = self.graph.node(run)["props"]
            if goal is None:
                goal = self._last(run, "serves")
                if goal is not None and self.graph.node(goal)["kind"] != "goal":
                    task_goal = self._last(goal, "serves")
                    goal = task_goal if task_goal and self.graph.node(task_goal)[
                        "kind"] == "goal" else None
            value = props.get("started_ts_ms")
            started = value if type(value) is int else None
            meta = props.get("metadata")
            who = meta.get("person") if isinstance(meta, dict) else None
            person = who if isinstance(who, str) else None
        return Why(pid, pin, goal=goal, run=run, eval=self._last(pid, "validated_by"),
                   decision=self._last(pid, "approved_by", "rejected_by"),
                   status=node["props"].get("status"), run_started_ms=started, person=person)

    def of(self, commit: str) -> Why | None:
        """The patch that pins `commit` (a full id), by its id or an abbreviation."""
        why = self.full.get(commit)
        if why is not None or not self.short:
            return why
        found = [w for pin, w in self.short.items() if commit.startswith(pin)]
        return max(found, key=_rank) if found else None

    def __bool__(self) -> bool:
        return bool(self.order)


def _rank(why: Why) -> int:
    return {"Promoted": 2, "Rejected": 0}.get(why.status or "", 1)
