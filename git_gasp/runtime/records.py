"""The paired record_* helpers of AgentState: each emits a domain event and the
`state.ops_applied` event that creates (or updates) its node."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from git_gasp.base.ids import new_id
from git_gasp.protocol.vocab import BASE_NODE_KINDS, ENTITY_CREATING
from git_gasp.runtime.ops import Op, clean, create_node, relate, update_node
from git_gasp.runtime.transitions import (
    DECISION_STATUSES,
    EVAL_STATUSES,
    canonical,
    check_transition,
)
from git_gasp.runtime.writepath import AUTO, StateError

_NOT_ID = re.compile(r"[^A-Za-z0-9]+")  # a kind's characters a node id may not hold



class EntityRecords:
    """Entity-creating helpers, artifacts and status changes (a mixin of AgentState)."""

    def _in_run(self, node_id: str) -> list[Op]:
        return [relate(node_id, "produced_by", self.run.run_id)] if self.run else []

    def _need(self, node_id: str | None, kind: str | tuple[str, ...], what: str) -> None:
        if node_id is None:
            return
        node = self.graph.node(node_id)
        kinds = (kind,) if isinstance(kind, str) else kind
        if node is None:
            raise StateError(f"{what} {node_id} does not exist")
        if node["kind"] not in kinds:
            raise StateError(f"{what} {node_id} is a {node['kind']}, not a {' or '.join(kinds)}")

    def _entity(self, kind: str, node_kind: str, payload: dict, props: dict, rels: list[Op],
                links: tuple[str | None, ...] = (), cause: Any = AUTO,
                actor: tuple[str, str] | None = None,
                before_append: Callable[[], None] | None = None) -> str:
        node_id = payload["id"]
        ops = [create_node(node_id, node_kind, clean(props)), *rels, *self._in_run(node_id)]
        self.emit(kind, payload, ops, cause=cause, links=links, actor=actor,
                  before_append=before_append)
        return node_id

    def _owner(self, actor: tuple[str, str] | None) -> dict:
        kind, ident = actor or self.actor
        return {"kind": kind, "id": ident}

    # --- entity-creating (paired) helpers -------------------------------------------
    def record_goal(self, title: str, summary: str = "", *, status: str = "Open",
                    parent: str | None = None, metadata: dict | None = None,
                    cause: Any = AUTO, node_id: str | None = None) -> str:
        """goal.created + CreateNode goal (+ goal serves parent goal)."""
        self._need(parent, "goal", "parent goal")
        status = canonical(status, ("Open", "Active", "Blocked"), "a new goal's status")
        gid = node_id or new_id("goal")
        payload = {"id": gid, "title": title, "summary": summary, "status": status,
                   "owner": self._owner(None), "metadata": metadata or {}}
        rels = [relate(gid, "serves", parent)] if parent else []
        return self._entity("goal.created", "goal", payload,
                            {"title": title, "summary": summary or None, "status": status,
                             "metadata": metadata or {}}, rels, (parent,), cause)

    def record_task(self, title: str, *, goal: str | None = None, status: str = "Open",
                    metadata: dict | None = None, cause: Any = AUTO) -> str:
        """task.created + CreateNode task (+ task serves goal)."""
        self._need(goal, "goal", "goal")
        status = canonical(status, ("Open", "InProgress", "Blocked"), "a new task's status")
        tid = new_id("task")
        payload = clean({"id": tid, "title": title, "status": status, "goal_id": goal,
                          "metadata": metadata or {}})
        payload.setdefault("metadata", {})
        rels = [relate(tid, "serves", goal)] if goal else []
        return self._entity("task.created", "task", payload,
                            {"title": title, "status": status, "goal_id": goal,
                             "metadata": metadata or {}}, rels, (goal,), cause)

    def record_observation(self, summary: str, *, about: str | None = None,
                           source: str | None = None, metadata: dict | None = None,
                           cause: Any = AUTO) -> str:
        """observation.created + CreateNode observation (+ observation observes `about`)."""
        self._need(about, tuple(self.vocab.node_kinds), "node")
        oid = new_id("observation")
        payload = clean({"id": oid, "summary": summary, "source": source})
        payload["metadata"] = metadata or {}
        rels = [relate(oid, "observes", about)] if about else []
        props = {"summary": summary, "source": source, "metadata": metadata or {}}
        return self._entity("observation.created", "observation", payload, props, rels,
                            (about,), cause)

    def record_failure(self, summary: str, *, observation: str | None = None,
                       status: str = "Open", metadata: dict | None = None,
                       cause: Any = AUTO) -> str:
        """failure.observed + CreateNode failure (+ failure derived_from observation)."""
        self._need(observation, "observation", "observation")
        status = canonical(status, ("Open",), "a new failure's status")
        fid = new_id("failure")
        payload = {"id": fid, "summary": summary, "status": status, "metadata": metadata or {}}
        rels = [relate(fid, "derived_from", observation)] if observation else []
        return self._entity("failure.observed", "failure", payload,
                            {"summary": summary, "status": status, "metadata": metadata or {}},
                            rels, (observation,), cause)

    def record_hypothesis(self, statement: str, *, explains: str | None = None,
                          metadata: dict | None = None, cause: Any = AUTO) -> str:
        """hypothesis.created + CreateNode hypothesis (+ hypothesis explains failure)."""
        self._need(explains, ("failure", "observation"), "failure")
        hid = new_id("hypothesis")
        payload = {"id": hid, "statement": statement, "status": "Open",
                   "metadata": metadata or {}}
        rels = [relate(hid, "explains", explains)] if explains else []
        return self._entity("hypothesis.created", "hypothesis", payload,
                            {"statement": statement, "status": "Open",
                             "metadata": metadata or {}}, rels, (explains,), cause)

    def propose_patch(self, title: str, *, advances: str | None = None,
                      addresses: str | None = None, hypothesis: str | None = None,
                      commit: str | None = None, skill: str | None = None,
                      summary: str = "", metadata: dict | None = None,
                      cause: Any = AUTO) -> str:
        """patch.proposed + CreateNode patch (Proposed) with advances / addresses /
        derived_from relations; `commit` pins the artifact as references_commit."""
        self._need(advances, "goal", "goal")
        self._need(addresses, "failure", "failure")
        self._need(hypothesis, "hypothesis", "hypothesis")
        pid = new_id("patch")
        payload = clean({"id": pid, "title": title, "summary": summary or None,
                          "status": "Proposed", "created_by": self._owner(None),
                          "references_commit": commit, "skill": skill})
        payload["metadata"] = metadata or {}
        rels = [relate(pid, "advances", advances)] if advances else []
        rels += [relate(pid, "addresses", addresses)] if addresses else []
        rels += [relate(pid, "derived_from", hypothesis)] if hypothesis else []
        props = {"title": title, "summary": summary or None, "status": "Proposed",
                 "references_commit": commit, "skill": skill, "metadata": metadata or {}}
        return self._entity("patch.proposed", "patch", payload, props, rels,
                            (advances, addresses, hypothesis), cause)

    def record_eval(self, command: str, status: str, *, score: float | None = None,
                    validates: str | None = None, metadata: dict | None = None,
                    cause: Any = AUTO) -> str:
        """eval.finished + CreateNode eval (+ patch validated_by eval)."""
        self._need(validates, "patch", "patch")
        status = canonical(status, EVAL_STATUSES, "eval status")
        eid = new_id("eval")
        payload = {"id": eid, "command": command, "status": status, "score": score,
                   "metadata": metadata or {}}
        rels = [relate(validates, "validated_by", eid)] if validates else []
        return self._entity("eval.finished", "eval", payload,
                            {"command": command, "status": status, "score": score,
                             "metadata": metadata or {}}, rels, (validates,), cause)

    def record_decision(self, status: str, reason: str, *, patch: str | None = None,
                        decided_by: tuple[str, str] | None = None,
                        metadata: dict | None = None, cause: Any = AUTO,
                        before_append: Callable[[], None] | None = None) -> str:
        """decision.created + CreateNode decision; with `patch`, approved_by / rejected_by
        and the patch's status set to Promoted / Rejected (promotion is policy-gated).

        `before_append` runs after every check passed, just before the write."""
        status = canonical(status, DECISION_STATUSES, "decision status")
        self._need(patch, "patch", "patch")
        did = new_id("decision")
        rels: list[Op] = []
        if patch:
            old = self.graph.node(patch)["props"].get("status")
            new = "Promoted" if status == "Approved" else "Rejected"
            check_transition("patch", patch, old, new)
            if new == "Promoted":
                self._gate(self.policy.check_promotion(self.graph, patch),
                           f"promoting {patch}")
            rels = [relate(patch, "approved_by" if status == "Approved" else "rejected_by", did),
                    update_node(patch, {"status": new})]
        who = decided_by or self.actor
        payload = {"id": did, "status": status, "reason": reason,
                   "decided_by": {"kind": who[0], "id": who[1]},
                   "metadata": (metadata or {}) | ({"patch": patch} if patch else {})}
        props = {"status": status, "reason": reason, "metadata": metadata or {}}
        return self._entity("decision.created", "decision", payload, props, rels, (patch,),
                            cause, actor=who if decided_by else None,
                            before_append=before_append)

    def record_frame(self, title: str, summary: str = "", *, metadata: dict | None = None,
                     cause: Any = AUTO) -> str:
        """frame.created + CreateNode frame."""
        fid = new_id("frame")
        payload = {"id": fid, "title": title, "summary": summary, "status": "Open",
                   "metadata": metadata or {}}
        return self._entity("frame.created", "frame", payload,
                            {"title": title, "summary": summary or None, "status": "Open",
                             "metadata": metadata or {}}, [], (), cause)

    def record_node(self, kind: str, props: dict, *, relations: list[tuple[str, str]] = (),
                    cause: Any = AUTO, node_id: str | None = None) -> str:
        """A node of any declared kind: `<kind>.created` + its ops pair.

        `relations` are (rel, target) pairs from the new node. Kinds outside the
        baseline must be declared first (declare_kind), so check 3 stays green.
        """
        if kind in BASE_NODE_KINDS and f"{kind}.created" in ENTITY_CREATING:
            raise StateError(f"use the {kind} helper (record_{kind}) for {kind} nodes")
        nid = node_id or new_id(_NOT_ID.sub("_", kind))
        for _rel, target in relations:
            if not self.graph.has_node(target):
                raise StateError(f"node {target} does not exist")
        rels = [relate(nid, rel, target) for rel, target in relations]
        payload = {"id": nid, **props}
        return self._entity(f"{kind}.created", kind, payload, dict(props), rels,
                            tuple(t for _r, t in relations), cause)

    def record_project_snapshot(self, *, commit: str | None = None, summary: str = "",
                                metadata: dict | None = None) -> str:
        """project.snapshot_recorded + CreateNode project_snapshot."""
        sid = new_id("project_snapshot")
        payload = clean({"id": sid, "commit": commit, "summary": summary})
        payload["metadata"] = metadata or {}
        props = clean({"commit": commit, "summary": summary or None, "metadata": metadata or {}})
        self.emit("project.snapshot_recorded", payload,
                  [create_node(sid, "project_snapshot", props), *self._in_run(sid)])
        return sid

    def attach_artifact(self, node_id: str, *, kind: str, uri: str, hash: str | None = None,
                        summary: str | None = None, metadata: dict | None = None) -> str:
        """artifact.attached + AttachArtifact on an existing node."""
        self._need(node_id, tuple(self.vocab.node_kinds), "node")
        artifact = {"kind": kind, "uri": uri, "hash": hash, "summary": summary,
                    "metadata": metadata or {}}
        self.emit("artifact.attached", {"id": node_id, "artifact": artifact},
                  [{"AttachArtifact": {"id": node_id, "artifact": artifact}}], links=(node_id,))
        return node_id

    # --- status updates ----------------------------------------------------------------
    def update_status(self, node_id: str, status: str, *, reason: str | None = None) -> str:
        """`<kind>.status_changed` + UpdateNode status, after validating the transition."""
        node = self.graph.node(node_id)
        if node is None:
            raise StateError(f"node {node_id} does not exist")
        kind = node["kind"]
        old = node["props"].get("status")
        new = check_transition(kind, node_id, old, status)
        if kind == "patch" and new == "Promoted":
            raise StateError("a patch is promoted by an Approved decision (record_decision)")
        payload = clean({"id": node_id, "from": old, "to": new, "reason": reason})
        self.emit(f"{kind}.status_changed", payload,
                  [update_node(node_id, {"status": new})], links=(node_id,))
        return new
