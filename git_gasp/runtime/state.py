"""AgentState: the folded graph of one agent repo plus the paired helpers that extend it.

Every helper emits a domain event and, where it changes the graph, the
`state.ops_applied` event caused by it (the pairing rule). Each ops batch is
validated against the current graph and vocabulary before anything is written
(no dangling op is ever appended), both events go to disk in one durable,
lease-checked write, and only then are the ops applied in memory.

The class is put together from one module per job: `opening` (read AGENT.md, fold
the log), `writepath` (validate, append, dispatch behaviours), `records` (the
record_* helpers), `runs` (the run lifecycle) and `ops` (the op builders, which stay
importable from here).
"""

from __future__ import annotations

import os
from pathlib import Path

from git_gasp.conformance.packs import load_vocabulary
from git_gasp.protocol.envelope import OPS_KIND, Event, parse_log
from git_gasp.protocol.fold import FoldResult, fold
from git_gasp.protocol.graph import Graph
from git_gasp.protocol.manifest import DEFAULT_LOCATIONS
from git_gasp.protocol.vocab import ENTITY_CREATING, Vocabulary
from git_gasp.runtime.endstate import save
from git_gasp.runtime.opening import open_state
from git_gasp.runtime.ops import Op, create_node, relate, update_node
from git_gasp.runtime.ops import clean as _clean
from git_gasp.runtime.policy import PolicySet
from git_gasp.runtime.queries import lineage, track_record
from git_gasp.runtime.records import EntityRecords
from git_gasp.runtime.runs import OpenRun, RunLifecycle
from git_gasp.runtime.writepath import AUTO as _AUTO
from git_gasp.runtime.writepath import MAX_BEHAVIOUR_DEPTH, Behaviour, StateError, WritePath
from git_gasp.store.append import EventStore, parse_tail
from git_gasp.store.lease import DEFAULT_TTL_MS, LeaseError
from git_gasp.store.snapshots import write_snapshot

__all__ = ["MAX_BEHAVIOUR_DEPTH", "AgentState", "Behaviour", "Op", "OpenRun", "StateError",
           "_AUTO", "_clean", "create_node", "relate", "update_node"]


class AgentState(EntityRecords, RunLifecycle, WritePath):
    """The agent's state: fold of state/events.jsonl, appended to through a lease."""

    def __init__(self, root: str | os.PathLike, store: EventStore, graph: Graph, *,
                 agent_id: str, vocab: Vocabulary, policy: PolicySet,
                 notes: list[str]) -> None:
        self.root = Path(root)  # the agent root (the directory holding AGENT.md)
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
        self.started_run: str | None = None  # the run this writer started (start_run)
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
    def open(cls, path: str | os.PathLike, worker_id: str | None = None, *, fsync: bool = True,
             lease_ttl_ms: int = DEFAULT_TTL_MS, use_snapshots: bool = True,
             end_state: bool = False) -> AgentState:
        """Fold the log at `path` (seeded from a valid snapshot) and recover an open run.

        `end_state`: start from the fold an earlier open saved (`save_end_state`) when
        the log still starts with the bytes it was saved from (`runtime/endstate.py`).

        Raises GaspError when AGENT.md is missing or the log has a bad or torn line.
        """
        opened = open_state(path, worker_id, fsync=fsync, lease_ttl_ms=lease_ttl_ms,
                            use_snapshots=use_snapshots, end_state=end_state)
        root = opened.root
        state = cls(root, opened.store, opened.result.graph,
                    agent_id=opened.manifest.agent_id, vocab=load_vocabulary(root),
                    policy=PolicySet.load(root), notes=opened.notes)
        state.memory_rel = opened.manifest.locations["memory"]
        state._data_for_index = opened.data
        state.seeded_from = opened.seeded_from
        state.seed_cached = opened.seed_cached
        state._running_hint = opened.running_hint
        state.last_event_id = opened.last_event_id
        state._skip(opened.result)
        if opened.index is not None:
            state._creator, state._event_ids = opened.index
        state._index(opened.events)
        state._full_index = opened.seeded_from is None
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
        data = self._data_for_index or self.store.read_bytes()
        self._index(parse_log(data).events)
        self._full_index = True
        self._data_for_index = None

    def has_event(self, event_id: str) -> bool:
        if event_id in self._event_ids:
            return True
        self._ensure_full_index()
        return event_id in self._event_ids

    def event_ids(self) -> set[str]:
        """Every event id of the log (parses the snapshot-covered prefix once)."""
        self._ensure_full_index()
        return self._event_ids

    def creator_of(self, node_id: str) -> str | None:
        """The domain event that created `node_id` (None for ops-only nodes)."""
        if node_id not in self._creator and not self._full_index:
            self._ensure_full_index()
        return self._creator.get(node_id)

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
        return parse_tail(data, 0, 1, self.store.rel, self.root)

    # --- queries (thin; see runtime.queries) ---------------------------------------------
    def lineage(self, node_id: str, depth: int = 3):
        return lineage(self.graph, node_id, depth)

    def track_record(self, skill: str):
        return track_record(self.graph, skill)

    def write_snapshot(self) -> str:
        """Write snapshots/<last-event>/graph.json for the whole log; return its path."""
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

    def save_end_state(self) -> str | None:
        """Keep this fold for the next ``open(..., end_state=True)`` of the log (call it
        holding the lease); returns why it was not kept, or None."""
        return save(self)

    # --- lease -------------------------------------------------------------------------
    def release(self) -> None:
        """Give up the lease (the next append takes it again)."""
        self.store.lease.release()

    def settle_lease(self) -> None:
        """After a command: give the lease back, or keep it for the worker's next command
        with no process holding it (`Lease.keep_between_commands`) while a run of its own
        is open: one it started here, or one whose kept lease it took over. A writer that
        recorded into another worker's open run (the MCP server, `git gasp record` beside
        a hooked session) gives it back: the lease is exclusion while writing, not
        ownership of a run, and keeping it would lock that run's own hooks out.
        A lease already lost is left alone."""
        try:
            if self.run is not None and self.owns_run():
                self.store.lease.keep_between_commands()
            else:
                self.store.lease.release()
        except LeaseError:
            pass

    def owns_run(self) -> bool:
        """Whether the open run is this writer's: started by it, or carried over to it by
        the lease its worker kept between commands (pid 0)."""
        if self.run is None:
            return False
        kept = self.store.lease.inherited
        return self.run.run_id == self.started_run or (kept is not None and kept.pid == 0)

    def close(self) -> None:
        """Give the lease back if this writer holds it (another worker's is left alone:
        a write refused by it must say so, not fail again on the way out)."""
        from git_gasp.store.lease import LeaseHeld

        try:
            self.release()
        except LeaseHeld:
            pass

    def __enter__(self) -> AgentState:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
