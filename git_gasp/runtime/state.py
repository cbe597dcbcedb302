"""AgentState: the folded graph of one agent repo plus the paired helpers that extend it.

Every helper emits a domain event and, where it changes the graph, the
`state.ops_applied` event caused by it (the pairing rule). Each ops batch is
validated against the current graph and vocabulary before anything is written
(no dangling op is ever appended), both events go to disk in one durable,
lease-checked write, and only then are the ops applied in memory.
"""

from __future__ import annotations

import fnmatch
import gc
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from git_gasp.base.errors import GaspError
from git_gasp.base.ids import new_id, now_ms, valid_id
from git_gasp.protocol.envelope import OPS_KIND, Event
from git_gasp.protocol.fold import FoldResult, apply_op, fold
from git_gasp.protocol.graph import Graph
from git_gasp.protocol.manifest import DEFAULT_LOCATIONS
from git_gasp.protocol.ops import NEEDS_NODE, OpError, parse_ops
from git_gasp.protocol.vocab import BASE_NODE_KINDS, ENTITY_CREATING, Vocabulary
from git_gasp.runtime.policy import ApprovalRequired, Gate, PolicyDenied, PolicySet, Verdict
from git_gasp.runtime.seed import is_unfinished_run
from git_gasp.runtime.transitions import (
    DECISION_STATUSES,
    EVAL_STATUSES,
    canonical,
    check_transition,
)
from git_gasp.store.append import EventStore, parse_tail, torn_error
from git_gasp.store.lease import DEFAULT_TTL_MS, Lease

_AUTO: Any = object()
MAX_BEHAVIOUR_DEPTH = 8


class StateError(GaspError):
    """A helper was asked for something the state does not allow."""


@dataclass
class OpenRun:
    run_id: str
    event_id: str  # the run.started event
    goal_id: str | None = None
    task_id: str | None = None


@dataclass
class Behaviour:
    pattern: str
    handler: Callable[[AgentState, Event], None]
    name: str = ""


Op = dict[str, Any]


def create_node(node_id: str, kind: str, props: dict) -> Op:
    return {"CreateNode": {"id": node_id, "kind": kind, "props": props}}


def relate(src: str, rel: str, dst: str, props: dict | None = None) -> Op:
    return {"CreateRelation": {"from": src, "rel": rel, "to": dst, "props": props or {}}}


def update_node(node_id: str, props: dict) -> Op:
    return {"UpdateNode": {"id": node_id, "props": props}}


def _clean(d: dict) -> dict:
    """Drop None values and empty metadata (metadata is persisted when it says something)."""
    return {k: v for k, v in d.items() if v is not None and not (k == "metadata" and v == {})}


def _refuse_missing_tracked_log(root: Path, rel: str) -> None:
    """A log that git tracks but the working tree lost is an error, not an empty log."""
    from git_gasp.base.errors import NotAGitRepo
    from git_gasp.store.gitrepo import open_repo

    try:
        repo, prefix = open_repo(root)
    except NotAGitRepo:
        return
    with repo:
        path = (prefix + b"/" if prefix else b"") + rel.encode()
        if path in repo.open_index():
            raise GaspError(f"{rel} is tracked but missing from the working tree; restore it "
                            f"with `git checkout -- {rel}`")


class AgentState:
    """The agent's state: fold of state/events.jsonl, appended to through a lease."""

    def __init__(self, root: Path, store: EventStore, graph: Graph, *, agent_id: str,
                 vocab: Vocabulary, policy: PolicySet, notes: list[str]) -> None:
        self.root = root
        self.store = store
        self.graph = graph
        self.agent_id = agent_id
        self.actor = ("agent", agent_id)
        self.vocab = vocab
        self.policy = policy
        self.notes = notes
        self.memory_rel = DEFAULT_LOCATIONS["memory"]  # AgentState.open: the manifest's
        self.skipped: list = []
        self.last_event_id: str | None = None
        self.run: OpenRun | None = None
        self.behaviours: list[Behaviour] = []
        self.seeded_from: str | None = None
        self.seed_cached = False  # the seed came from the verified local snapshot cache
        self._creator: dict[str, str] = {}  # node id -> creating domain event id
        self._event_ids: set[str] = set()
        self._full_index = False
        self._approver: str | None = None
        self._triggers: list[Event] = []
        self._data_for_index: bytes | None = None
        self._running_hint: list[str] | None = None  # unfinished runs of a lazy seed

    # --- opening -------------------------------------------------------------
    @classmethod
    def open(cls, path: str | Path, worker_id: str | None = None, *, fsync: bool = True,
             lease_ttl_ms: int = DEFAULT_TTL_MS, use_snapshots: bool = True) -> AgentState:
        """Fold the log at `path` (seeded from a valid snapshot) and recover an open run.

        Raises GaspError when AGENT.md is missing or the log has a bad or torn line.
        """
        from git_gasp.conformance.checks import load_vocabulary
        from git_gasp.protocol.manifest import ManifestError, parse_manifest
        from git_gasp.runtime import seed as seeds
        from git_gasp.store.agentfs import AgentFileError, read_regular
        from git_gasp.store.snapshots import find_seed

        root = Path(path)
        if not root.is_dir():
            raise GaspError(f"{root}: no such directory")
        try:
            manifest = parse_manifest(read_regular(root, "AGENT.md"))
        except AgentFileError as exc:
            raise GaspError(f"{exc}: {root} is not an agent repo (create one with "
                            "`git gasp init`)") from None
        except ManifestError as exc:
            raise GaspError(f"AGENT.md: {exc}") from None
        rel = manifest.locations["log"]
        lease = Lease(root, worker_id, lease_ttl_ms)
        store = EventStore(root, rel, lease, fsync=fsync)
        if not store.check_path():
            _refuse_missing_tracked_log(root, rel)
        notes: list[str] = []
        # Loading builds hundreds of thousands of containers and no cycles: the cyclic GC
        # would only rescan them over and over (it doubles the open time of a big log).
        gc_was_on = gc.isenabled()
        gc.disable()
        try:
            fast = None
            if use_snapshots:
                fast = seeds.open_fast(root, store.path, rel, notes)
            data = None
            if fast is not None:
                seeded_from, graph, events = fast.rel, fast.graph, fast.events
                seed_event = fast.event_id
                store.mark_read_size(fast.size, fast.line_count + fast.tail_lines)
            else:
                data = store.read_bytes()
                if data and not data.endswith(b"\n"):
                    raise torn_error(rel, data)
                total = data.count(b"\n")
                seed = None
                if use_snapshots and data:
                    seed, seed_notes = find_seed(root, data, total=total)
                    notes += seed_notes
                    if seed is not None:
                        seeds.save(root, seed, notes)
                graph = seed.graph if seed else Graph()
                start, first = (seed.offset, seed.integrity.line_count + 1) if seed else (0, 1)
                events = parse_tail(data, start, first, rel)
                seeded_from = seed.path if seed else None
                seed_event = seed.integrity.event_id if seed else None
                store.mark_read(data, total)
            result = fold(events, graph=graph)
        finally:
            if gc_was_on:
                gc.enable()
        state = cls(root, store, result.graph, agent_id=manifest.agent_id,
                    vocab=load_vocabulary(root), policy=PolicySet.load(root), notes=notes)
        state.memory_rel = manifest.locations["memory"]
        state._data_for_index = data if seeded_from else None
        state.seeded_from = seeded_from
        state.seed_cached = fast is not None
        state._running_hint = fast.running if fast is not None else None
        state.last_event_id = events[-1].id if events else seed_event
        state._skip(result)
        state._index(events)
        state._full_index = seeded_from is None
        state._recover_run()
        return state

    def _skip(self, result: FoldResult) -> None:
        for skip in result.skipped:
            self.skipped.append(skip)
            self.notes.append(f"fold skipped {skip.describe()}")

    def _index(self, events: list[Event]) -> None:
        for e in events:
            self._event_ids.add(e.id)
            payload = e.payload
            if e.kind != OPS_KIND and type(payload) is dict:
                nid = payload.get("id") if e.kind != "run.started" else payload.get("run_id")
                if type(nid) is str and (e.kind.endswith((".created", ".proposed", ".observed",
                                                          ".started", ".called"))
                                         or e.kind in ENTITY_CREATING):
                    self._creator.setdefault(nid, e.id)

    def _ensure_full_index(self) -> None:
        """Parse the snapshot-covered prefix too (only when an old id must be looked up)."""
        if self._full_index:
            return
        from git_gasp.protocol.envelope import parse_log

        data = self._data_for_index or self.store.read_bytes()
        self._index(parse_log(data).events)
        self._full_index = True
        self._data_for_index = None

    def has_event(self, event_id: str) -> bool:
        if event_id in self._event_ids:
            return True
        self._ensure_full_index()
        return event_id in self._event_ids

    def creator_of(self, node_id: str) -> str | None:
        """The domain event that created `node_id` (None for ops-only nodes)."""
        if node_id not in self._creator and not self._full_index:
            self._ensure_full_index()
        return self._creator.get(node_id)

    def _unfinished_runs(self) -> list[dict]:
        """Run nodes an open resumes, in node order.

        On a graph still lazily loaded from the snapshot cache, only the runs unfinished
        in the snapshot (kept in the cache entry) and the nodes loaded or created since
        can be unfinished: every other node is untouched since the snapshot."""
        graph = self.graph
        if self._running_hint is None or not graph.is_lazy:
            return [n for n in graph.iter_nodes() if is_unfinished_run(n)]
        ids = set(self._running_hint)
        ids.update(graph.touched())
        found = {}
        for nid in ids:
            node = graph.node(nid)
            if node is not None and is_unfinished_run(node):
                found[nid] = node
        if len(found) < 2:
            return list(found.values())
        return [found[nid] for nid in graph.node_ids() if nid in found]

    def _recover_run(self) -> None:
        running = self._unfinished_runs()
        if not running:
            return
        node = running[-1]
        props = node["props"]
        started = props.get("started_event") or self.creator_of(node["id"])
        if not isinstance(started, str):
            self.notes.append(f"run {node['id']} is unfinished but its run.started event is "
                              "unknown; it cannot be resumed")
            return
        self.run = OpenRun(node["id"], started, props.get("goal_id"), props.get("task_id"))
        if len(running) > 1:
            self.notes.append(f"{len(running)} runs are unfinished; resuming the latest, "
                              f"{node['id']}")

    # --- refresh / events ------------------------------------------------------
    def refresh(self) -> int:
        """Fold events another writer appended since we read; return how many."""
        events = self.store.new_events()
        if events:
            self._skip(fold(events, graph=self.graph))
            self._index(events)
            self.last_event_id = events[-1].id
            self._recover_run()
        return len(events)

    def _begin(self) -> None:
        """Before a write: hold the lease, then fold whatever was appended before we got it."""
        self.store.lease.ensure()
        self.refresh()

    def events(self) -> list[Event]:
        """Every event of the log, parsed (reads the whole file)."""
        data = self.store.read_bytes()
        return parse_tail(data, 0, 1, self.store.rel)

    # --- policies / behaviours --------------------------------------------------
    @contextmanager
    def approval(self, approver: str) -> Iterator[None]:
        """Changes made inside carry `approver`'s sign-off for RequireApproval gates."""
        old, self._approver = self._approver, approver
        try:
            yield
        finally:
            self._approver = old

    def _gate(self, gate: Gate, what: str) -> None:
        if gate.verdict is Verdict.DENY:
            raise PolicyDenied(f"policy denies {what}: {gate.reason}")
        if gate.verdict is Verdict.REQUIRE_APPROVAL and not self._approver:
            raise ApprovalRequired(f"{what} requires approval ({gate.reason}); "
                                   "name an approver (--approved-by)")

    def on(self, pattern: str, handler: Callable[[AgentState, Event], None],
           name: str = "") -> Behaviour:
        """Subscribe `handler(state, event)` to domain events whose kind matches `pattern`."""
        behaviour = Behaviour(pattern, handler, name or getattr(handler, "__name__", "behaviour"))
        self.behaviours.append(behaviour)
        return behaviour

    def declare_kind(self, kind: str, *, required_props: list[str] | None = None,
                     description: str = "", relations: dict[str, str] | None = None) -> None:
        """Declare a node kind (and relations) in the runtime's pack so the repo stays
        conformant (check 3)."""
        from git_gasp.runtime.packs import declare

        self.vocab = declare(self.root, kind, required_props or [], description,
                             relations or {})

    # --- the write path ----------------------------------------------------------
    def _validate(self, ops: list[Op]) -> None:
        """Refuse a batch that would not apply cleanly and completely to the graph."""
        try:
            parsed = parse_ops(ops)
        except OpError as exc:
            raise StateError(f"invalid ops: {exc}") from None
        has_node = self.graph.has_node
        created: set[str] = set()
        for i, (tag, body) in enumerate(parsed, 1):
            where = f"op #{i} ({tag})"
            if tag == "CreateNode":
                nid, kind = body["id"], body["kind"]
                if not valid_id(nid):
                    raise StateError(f"{where}: {nid!r} is not a usable node id")
                if has_node(nid) or nid in created:
                    raise StateError(f"{where}: node {nid} already exists")
                if kind not in self.vocab.node_kinds:
                    raise StateError(f"{where}: node kind {kind!r} is not in the vocabulary; "
                                     "declare it first (AgentState.declare_kind)")
                missing = [p for p in self.vocab.required_props.get(kind, ())
                           if p not in body["props"]]
                if missing:
                    raise StateError(f"{where}: {kind} needs props {', '.join(missing)}")
                self._gate(self.policy.check_node(kind), f"creating a {kind} node")
                created.add(nid)
            elif tag in NEEDS_NODE:
                if not has_node(body["id"]) and body["id"] not in created:
                    raise StateError(f"{where}: node {body['id']} does not exist")
            elif tag == "CreateRelation":
                for end in ("from", "to"):
                    if not has_node(body[end]) and body[end] not in created:
                        raise StateError(f"{where}: {end} node {body[end]} does not exist")
                if body["rel"] not in self.vocab.relations:
                    raise StateError(f"{where}: relation {body['rel']!r} is not in the "
                                     "vocabulary; declare it in a pack first")
                self._gate(self.policy.check_relation(body["rel"]),
                           f"a {body['rel']} relation")
            elif tag == "DeleteRelation":
                if not self.graph.has_relation(body["from"], body["rel"], body["to"]):
                    raise StateError(f"{where}: no relation {body['from']} -{body['rel']}-> "
                                     f"{body['to']}")

    def _resolve_cause(self, kind: str, cause: Any, links: tuple[str | None, ...]) -> str | None:
        if cause is not _AUTO:
            if cause is not None and not self.has_event(cause):
                raise StateError(f"cause {cause} is not an event in the log")
            return cause
        if self._triggers:
            return self._triggers[-1].id
        if self.run is not None:
            return self.run.event_id
        for node in links:
            if node:
                creator = self.creator_of(node)
                if creator:
                    return creator
        if kind.endswith((".created", ".started")):
            return None
        raise StateError(f"{kind} needs a cause: start a run first (`git gasp run start`) or "
                         "link it to an existing node")

    def emit(self, kind: str, payload: Any, ops: list[Op] | None = None, *, cause: Any = _AUTO,
             correlation: Any = _AUTO, actor: tuple[str, str] | None = None,
             links: tuple[str | None, ...] = (),
             before_append: Callable[[], None] | None = None) -> Event:
        """Append a domain event (+ its paired ops event) atomically; return the domain event.

        `before_append` runs once every check has passed, just before the write (an error
        it raises appends nothing)."""
        self._begin()
        return self._emit(kind, payload, ops, cause=cause, correlation=correlation,
                          actor=actor, links=links, before_append=before_append)

    def _emit(self, kind: str, payload: Any, ops: list[Op] | None = None, *,
              cause: Any = _AUTO, correlation: Any = _AUTO,
              actor: tuple[str, str] | None = None, links: tuple[str | None, ...] = (),
              before_append: Callable[[], None] | None = None) -> Event:
        """emit, for a caller that has just called _begin."""
        if ops:
            self._validate(ops)
        cause_id = self._resolve_cause(kind, cause, links)
        if correlation is _AUTO:
            if self.run is not None:
                correlation = self.run.run_id
            elif self._triggers:
                correlation = self._triggers[-1].correlation_id
            elif type(payload) is dict:
                correlation = payload.get("id") or payload.get("run_id")
            else:
                correlation = None
        akind, aid = actor or self.actor
        ts = now_ms()
        domain = Event(new_id("event"), 1, ts, akind, aid, kind, payload, cause_id, correlation)
        batch = [domain]
        if ops:
            batch.append(Event(new_id("event"), 1, ts, akind, aid, OPS_KIND, ops, domain.id,
                               correlation))
        if before_append is not None:
            before_append()
        self._append(batch)
        self._dispatch(domain)
        return domain

    def apply_ops(self, ops: list[Op], *, cause: str | None = None) -> Event:
        """The raw escape hatch: an ops-only event (validated like every batch).

        With no cause it is a maintenance mutation, which must not restate an entity
        that a domain event created (pairing rule).
        """
        self._begin()
        self._validate(ops)
        if cause is not None and not self.has_event(cause):
            raise StateError(f"cause {cause} is not an event in the log")
        akind, aid = self.actor
        event = Event(new_id("event"), 1, now_ms(), akind, aid, OPS_KIND, ops, cause,
                      self.run.run_id if self.run else None)
        self._append([event])
        return event

    def _append(self, batch: list[Event]) -> None:
        self.store.append(batch)
        for event in batch:
            if event.kind == OPS_KIND:
                for op in event.payload:
                    ((tag, body),) = op.items()
                    reason = apply_op(self.graph, tag, body)
                    if reason is not None:  # pragma: no cover - _validate prevents it
                        raise StateError(f"internal: validated op failed: {reason}")
        self._index(batch)
        self.last_event_id = batch[-1].id

    def _dispatch(self, event: Event) -> None:
        matching = [b for b in self.behaviours if fnmatch.fnmatchcase(event.kind, b.pattern)]
        if not matching:
            return
        if len(self._triggers) >= MAX_BEHAVIOUR_DEPTH:
            raise StateError(f"behaviours nest deeper than {MAX_BEHAVIOUR_DEPTH} levels "
                             f"(at {event.kind}); a behaviour probably triggers itself")
        self._triggers.append(event)
        try:
            for behaviour in matching:
                behaviour.handler(self, event)
        finally:
            self._triggers.pop()

    # --- helpers shared by the record_* family --------------------------------------
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
                links: tuple[str | None, ...] = (), cause: Any = _AUTO,
                actor: tuple[str, str] | None = None,
                before_append: Callable[[], None] | None = None) -> str:
        node_id = payload["id"]
        ops = [create_node(node_id, node_kind, _clean(props)), *rels, *self._in_run(node_id)]
        self.emit(kind, payload, ops, cause=cause, links=links, actor=actor,
                  before_append=before_append)
        return node_id

    def _owner(self, actor: tuple[str, str] | None) -> dict:
        kind, ident = actor or self.actor
        return {"kind": kind, "id": ident}

    # --- entity-creating (paired) helpers -------------------------------------------
    def record_goal(self, title: str, summary: str = "", *, status: str = "Open",
                    parent: str | None = None, metadata: dict | None = None,
                    cause: Any = _AUTO, node_id: str | None = None) -> str:
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
                    metadata: dict | None = None, cause: Any = _AUTO) -> str:
        """task.created + CreateNode task (+ task serves goal)."""
        self._need(goal, "goal", "goal")
        status = canonical(status, ("Open", "InProgress", "Blocked"), "a new task's status")
        tid = new_id("task")
        payload = _clean({"id": tid, "title": title, "status": status, "goal_id": goal,
                          "metadata": metadata or {}})
        payload.setdefault("metadata", {})
        rels = [relate(tid, "serves", goal)] if goal else []
        return self._entity("task.created", "task", payload,
                            {"title": title, "status": status, "goal_id": goal,
                             "metadata": metadata or {}}, rels, (goal,), cause)

    def record_observation(self, summary: str, *, about: str | None = None,
                           source: str | None = None, metadata: dict | None = None,
                           cause: Any = _AUTO) -> str:
        """observation.created + CreateNode observation (+ observation observes `about`)."""
        self._need(about, tuple(self.vocab.node_kinds), "node")
        oid = new_id("observation")
        payload = _clean({"id": oid, "summary": summary, "source": source})
        payload["metadata"] = metadata or {}
        rels = [relate(oid, "observes", about)] if about else []
        props = {"summary": summary, "source": source, "metadata": metadata or {}}
        return self._entity("observation.created", "observation", payload, props, rels,
                            (about,), cause)

    def record_failure(self, summary: str, *, observation: str | None = None,
                       status: str = "Open", metadata: dict | None = None,
                       cause: Any = _AUTO) -> str:
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
                          metadata: dict | None = None, cause: Any = _AUTO) -> str:
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
                      cause: Any = _AUTO) -> str:
        """patch.proposed + CreateNode patch (Proposed) with advances / addresses /
        derived_from relations; `commit` pins the artifact as references_commit."""
        self._need(advances, "goal", "goal")
        self._need(addresses, "failure", "failure")
        self._need(hypothesis, "hypothesis", "hypothesis")
        pid = new_id("patch")
        payload = _clean({"id": pid, "title": title, "summary": summary or None,
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
                    cause: Any = _AUTO) -> str:
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
                        metadata: dict | None = None, cause: Any = _AUTO,
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
                     cause: Any = _AUTO) -> str:
        """frame.created + CreateNode frame."""
        fid = new_id("frame")
        payload = {"id": fid, "title": title, "summary": summary, "status": "Open",
                   "metadata": metadata or {}}
        return self._entity("frame.created", "frame", payload,
                            {"title": title, "summary": summary or None, "status": "Open",
                             "metadata": metadata or {}}, [], (), cause)

    def record_node(self, kind: str, props: dict, *, relations: list[tuple[str, str]] = (),
                    cause: Any = _AUTO, node_id: str | None = None) -> str:
        """A node of any declared kind: `<kind>.created` + its ops pair.

        `relations` are (rel, target) pairs from the new node. Kinds outside the
        baseline must be declared first (declare_kind), so check 3 stays green.
        """
        if kind in BASE_NODE_KINDS and f"{kind}.created" in ENTITY_CREATING:
            raise StateError(f"use the {kind} helper (record_{kind}) for {kind} nodes")
        nid = node_id or new_id(re.sub(r"[^A-Za-z0-9]+", "_", kind))
        for _rel, target in relations:
            if not self.graph.has_node(target):
                raise StateError(f"node {target} does not exist")
        rels = [relate(nid, rel, target) for rel, target in relations]
        payload = {"id": nid, **props}
        return self._entity(f"{kind}.created", kind, payload, dict(props), rels,
                            tuple(t for _r, t in relations), cause)

    # --- runs (raw layer, paired) ------------------------------------------------------
    def start_run(self, task: str, *, goal: str | None = None, task_id: str | None = None,
                  metadata: dict | None = None, run_id: str | None = None) -> str:
        """run.started + CreateNode run (running); later events chain to it."""
        self._begin()
        if self.run is not None:
            raise StateError(f"run {self.run.run_id} is still open; finish it first "
                             "(`git gasp run finish --outcome …`)")
        self._need(goal, "goal", "goal")
        self._need(task_id, "task", "task")
        rid = run_id or new_id("run")
        if not valid_id(rid) or self.graph.has_node(rid):
            raise StateError(f"run id {rid!r} is not usable (invalid or taken)")
        payload = _clean({"run_id": rid, "task": task, "goal_id": goal, "task_id": task_id})
        payload["metadata"] = metadata or {}
        # the ops need the domain event id (started_event): build by hand
        cause = self.creator_of(task_id) if task_id else (self.creator_of(goal) if goal else None)
        props = _clean({"task": task, "status": "running", "goal_id": goal, "task_id": task_id,
                        "started_ts_ms": now_ms(), "metadata": metadata or {}})
        ops = [create_node(rid, "run", props)]
        ops += [relate(rid, "serves", task_id)] if task_id else []
        ops += [relate(rid, "serves", goal)] if goal else []
        self._validate(ops)
        akind, aid = self.actor
        ts = now_ms()
        domain = Event(new_id("event"), 1, ts, akind, aid, "run.started", payload, cause, rid)
        props["started_event"] = domain.id
        ops_event = Event(new_id("event"), 1, ts, akind, aid, OPS_KIND, ops, domain.id, rid)
        self._append([domain, ops_event])
        self.run = OpenRun(rid, domain.id, goal, task_id)
        self._dispatch(domain)
        return rid

    def finish_run(self, outcome: str, *, run_id: str | None = None,
                   metadata: dict | None = None) -> str:
        """run.finished + UpdateNode run (finished, outcome); closes the open run."""
        self._begin()
        if "\n" in outcome:
            raise StateError("an outcome is one line (it becomes a commit trailer)")
        if self.run is None:
            node = self.graph.node(run_id or "")
            if node is not None and node["props"].get("status") == "finished":
                raise StateError(f"run {run_id} already finished "
                                 f"({node['props'].get('outcome')})")
            raise StateError("no run is open")
        if run_id is not None and run_id != self.run.run_id:
            raise StateError(f"run {run_id} is not the open run ({self.run.run_id})")
        run = self.run
        payload = {"run_id": run.run_id, "outcome": outcome, "metadata": metadata or {}}
        props = _clean({"status": "finished", "outcome": outcome, "finished_ts_ms": now_ms(),
                        "metadata": metadata or {}})
        self._emit("run.finished", payload, [update_node(run.run_id, props)],
                   cause=run.event_id, correlation=run.run_id)
        self.run = None
        return run.run_id

    def _need_run(self, what: str) -> OpenRun:
        if self.run is None:
            raise StateError(f"{what} needs an open run (`git gasp run start`)")
        return self.run

    def record_model_call(self, model: str, *, provider: str | None = None,
                          input_summary: str = "", metadata: dict | None = None) -> str:
        """model.called + CreateNode model_call (running) produced_by the run."""
        run = self._need_run("a model call")
        mid = new_id("model_call")
        payload = _clean({"id": mid, "run_id": run.run_id, "model": model, "provider": provider,
                          "input_summary": input_summary})
        payload["metadata"] = metadata or {}
        props = {"model": model, "provider": provider, "input_summary": input_summary or None,
                 "run_id": run.run_id, "status": "running", "metadata": metadata or {}}
        self.emit("model.called", payload,
                  [create_node(mid, "model_call", _clean(props)), *self._in_run(mid)])
        return mid

    def finish_model_call(self, call_id: str, *, output_summary: str = "",
                          success: bool = True, metadata: dict | None = None) -> str:
        """model.finished + UpdateNode on the model_call's outcome props."""
        return self._finish_call("model", call_id, output_summary, success, metadata)

    def record_tool_call(self, tool: str, *, input_summary: str = "",
                         metadata: dict | None = None) -> str:
        """tool.called + CreateNode tool_call (running) produced_by the run."""
        run = self._need_run("a tool call")
        tid = new_id("tool_call")
        payload = {"id": tid, "run_id": run.run_id, "tool": tool, "input_summary": input_summary,
                   "metadata": metadata or {}}
        props = {"tool": tool, "input_summary": input_summary or None, "run_id": run.run_id,
                 "status": "running", "metadata": metadata or {}}
        self.emit("tool.called", payload,
                  [create_node(tid, "tool_call", _clean(props)), *self._in_run(tid)])
        return tid

    def finish_tool_call(self, call_id: str, *, output_summary: str = "",
                         success: bool = True, metadata: dict | None = None) -> str:
        """tool.finished + UpdateNode on the tool_call's outcome props."""
        return self._finish_call("tool", call_id, output_summary, success, metadata)

    def _finish_call(self, what: str, call_id: str, output: str, success: bool,
                     metadata: dict | None) -> str:
        self._need(call_id, f"{what}_call", f"{what} call")
        node = self.graph.node(call_id)
        if node["props"].get("status") != "running":
            raise StateError(f"{what} call {call_id} already finished")
        run_id = node["props"].get("run_id") or (self.run.run_id if self.run else None)
        payload = _clean({"id": call_id, "run_id": run_id, "output_summary": output,
                          "success": bool(success)})
        payload["metadata"] = metadata or {}
        props = _clean({"status": "succeeded" if success else "failed", "success": bool(success),
                        "output_summary": output or None, "finished_ts_ms": now_ms(),
                        "outcome_metadata": metadata or None})
        self.emit(f"{what}.finished", payload, [update_node(call_id, props)], links=(call_id,))
        return call_id

    def record_project_snapshot(self, *, commit: str | None = None, summary: str = "",
                                metadata: dict | None = None) -> str:
        """project.snapshot_recorded + CreateNode project_snapshot."""
        sid = new_id("project_snapshot")
        payload = _clean({"id": sid, "commit": commit, "summary": summary})
        payload["metadata"] = metadata or {}
        props = _clean({"commit": commit, "summary": summary or None, "metadata": metadata or {}})
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
        payload = _clean({"id": node_id, "from": old, "to": new, "reason": reason})
        self.emit(f"{kind}.status_changed", payload,
                  [update_node(node_id, {"status": new})], links=(node_id,))
        return new

    # --- queries (thin; see runtime.queries) ---------------------------------------------
    def lineage(self, node_id: str, depth: int = 3):
        from git_gasp.runtime.queries import lineage

        return lineage(self.graph, node_id, depth)

    def track_record(self, skill: str):
        from git_gasp.runtime.queries import track_record

        return track_record(self.graph, skill)

    def write_snapshot(self) -> str:
        """Write snapshots/<last-event>/graph.json for the whole log; return its path."""
        from git_gasp.store.snapshots import write_snapshot

        if self.last_event_id is None:
            raise StateError("the log is empty: nothing to snapshot")
        self.refresh()
        # exactly the bytes folded: a concurrent append past them must not reach the record
        size, lines = self.store.size, self.store.line_count
        data = self.store.read_bytes()
        if len(data) < size:
            raise StateError(f"{self.store.rel} shrank under us; reopen the state")
        rel, _created = write_snapshot(self.root, data[:size], self.graph, lines,
                                       self.last_event_id)
        return rel

    # --- lease -------------------------------------------------------------------------
    def release(self) -> None:
        """Give up the lease (the next append takes it again)."""
        self.store.lease.release()

    def close(self) -> None:
        self.release()

    def __enter__(self) -> AgentState:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
