"""Opening an agent repo: read AGENT.md and fold the log (seeded from a verified
snapshot, through the local cache when it has one) into what AgentState.open builds the
state from (the state module imports this one, never the other way round)."""

from __future__ import annotations

import gc
import os
from pathlib import Path

from git_gasp.base.errors import GaspError, NotAGitRepo
from git_gasp.base.record import Record as Value
from git_gasp.odb.repo import open_repo
from git_gasp.protocol.envelope import Event
from git_gasp.protocol.fold import FoldResult, fold
from git_gasp.protocol.graph import Graph
from git_gasp.protocol.manifest import Manifest, ManifestError, parse_manifest
from git_gasp.runtime import seed as seeds
from git_gasp.runtime.endstate import EndState, load
from git_gasp.store.agentfs import AgentFileError, read_regular
from git_gasp.store.append import EventStore, parse_tail, torn_error
from git_gasp.store.lease import Lease
from git_gasp.store.snapshots import find_seed


class Opened(Value):
    """An agent repo read and folded: the parts an AgentState is made of."""

    FIELDS = ("root", "store", "manifest", "result", "events", "notes", "data", "seeded_from",
              "seed_cached", "running_hint", "last_event_id", "index")

    def __init__(self, root: str, store: EventStore, manifest: Manifest, result: FoldResult,
                 events: list[Event], notes: list[str], data: bytes | None,
                 seeded_from: str | None, seed_cached: bool, running_hint: list[str] | None,
                 last_event_id: str | None,
                 index: tuple[dict[str, str], set[str]] | None = None) -> None:
        self.root = root
        self.store = store
        self.manifest = manifest
        self.result = result  # the fold of the events read (its graph is the state's)
        self.events = events  # the events folded (after the seed, if any)
        self.notes = notes
        self.data = data  # the log read, when a snapshot seeded the fold (for the index)
        self.seeded_from = seeded_from
        self.seed_cached = seed_cached  # the seed came from the verified local snapshot cache
        self.running_hint = running_hint  # unfinished runs of a lazy seed
        self.last_event_id = last_event_id
        self.index = index  # creators, event ids: end state


def _refuse_missing_tracked_log(root: str, rel: str) -> None:
    """A log that git tracks but the working tree lost is an error, not an empty log."""
    try:
        repo, prefix = open_repo(root)
    except NotAGitRepo:
        return
    with repo:
        path = (prefix + b"/" if prefix else b"") + rel.encode()
        if path in repo.open_index():
            raise GaspError(f"{rel} is tracked but missing from the working tree; restore it "
                            f"with `git checkout -- {rel}`")


def _from_end_state(root: str, store: EventStore, manifest: Manifest,
                    end: EndState) -> Opened:
    """The state of a saved end state (`runtime/endstate.py`) and the lines after it."""
    data, rel = end.data, store.rel
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        events = parse_tail(data, end.size, end.line_count + 1, rel, root)
        result = fold(events, graph=end.graph)
    finally:
        if gc_was_on:
            gc.enable()
    store.mark_read_size(len(data), end.line_count + len(events))
    return Opened(root, store, manifest, result, events, [], data=None, seeded_from=None,
                  seed_cached=False, running_hint=None,
                  last_event_id=events[-1].id if events else end.last_event_id,
                  index=(end.creator, end.event_ids))


def open_state(path: str | os.PathLike, worker_id: str | None, *, fsync: bool, lease_ttl_ms: int,
               use_snapshots: bool, end_state: bool = False) -> Opened:
    """Read AGENT.md at `path` and fold its log (seeded from a valid snapshot, or with
    `end_state`, from the end state saved after the last open: `runtime/endstate.py`).

    Raises GaspError when AGENT.md is missing or the log has a bad or torn line.
    """
    root = str(Path(path))
    if not Path(root).is_dir():
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
    if end_state:
        end = load(root, rel, store.path)
        if end is not None:
            return _from_end_state(root, store, manifest, end)
    tree = Path(root)

    notes: list[str] = []
    # Loading builds hundreds of thousands of containers and no cycles: the cyclic GC
    # would only rescan them over and over (it doubles the open time of a big log).
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        fast = None
        if use_snapshots:
            fast = seeds.open_fast(tree, Path(store.path), rel, notes)
        data = None
        if fast is not None:
            seeded_from, graph, events = fast.rel, fast.graph, fast.events
            seed_event = fast.event_id
            store.mark_read_size(fast.size, fast.line_count + fast.tail_lines)
        else:
            data = store.read_bytes()
            if data and not data.endswith(b"\n"):
                raise torn_error(rel, data, root)
            total = data.count(b"\n")
            seed = None
            if use_snapshots and data:
                seed, seed_notes = find_seed(tree, data, total=total)
                notes += seed_notes
                if seed is not None:
                    seeds.save(tree, seed, notes)
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
    return Opened(root, store, manifest, result, events, notes,
                  data=data if seeded_from else None, seeded_from=seeded_from,
                  seed_cached=fast is not None,
                  running_hint=fast.running if fast is not None else None,
                  last_event_id=events[-1].id if events else seed_event)
