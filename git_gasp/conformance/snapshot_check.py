"""Check 2's snapshots: every snapshots/<id>/graph.json must match the log prefix its
integrity record names and equal the fold of that prefix.

A verdict depends only on the graph.json bytes and the log's first `line_count` lines,
so it is kept in the saved log state (``logfindings``) keyed by the snapshot's name and
the sha256 of its bytes, and reused while the state's verified prefix covers those
lines. The bytes' hash is taken again unless the file's lstat (size, mtime, ctime,
inode, device) is the one recorded when it was hashed, and that was not racily recent
(git's stat test). Snapshots without a usable verdict are checked: the prefix is hashed
(incrementally, once for all of them) and the fold is replayed from the newest snapshot
already proven equal to its prefix — or from the start, fed along with a cold pass.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from git_gasp.conformance.logstate import LogState
from git_gasp.conformance.report import CheckResult
from git_gasp.protocol.envelope import OPS_KIND, EnvelopeError, Event, parse_line
from git_gasp.protocol.fold import fold
from git_gasp.protocol.graph import Graph
from git_gasp.protocol.jsonstrict import JsonError, loads_slow
from git_gasp.protocol.snapshot import SnapshotError, integrity_mismatch, parse_snapshot
from git_gasp.store.agentfs import AgentFileError, read_regular
from git_gasp.store.snapshots import load_document

# Verdict kinds. BAD: the bytes alone fail (unreadable as a snapshot, misnamed);
# INTEGRITY / UNPARSED: the record does not match the prefix / it covers bad lines;
# SAME / DIFFERS: the graph equals / differs from the fold of the prefix.
BAD, INTEGRITY, UNPARSED, SAME, DIFFERS = "bad", "integrity", "unparsed", "same", "differs"
_RACY_NS = 2_000_000_000  # a file changed this recently may change again unseen

Verdict = tuple  # (name, sha256, stat signature | None, kind, line_count, message | None)


def _signature(st: os.stat_result) -> tuple | None:
    now = time.time_ns()
    if now - st.st_mtime_ns < _RACY_NS or now - st.st_ctime_ns < _RACY_NS:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


class _Snapshot:
    """One snapshots/<name>/graph.json being checked."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.rel = f"snapshots/{name}/graph.json"
        self.sha: str | None = None
        self.sig: tuple | None = None
        self.verdict: Verdict | None = None  # reused or decided
        self.graph: Graph | None = None
        self.integrity = None
        self.reason: str | None = None  # the integrity mismatch, once decided


class SnapshotCheck:
    """Check 2's snapshot part over `state`: `prepare` before the lines are fed (it may
    join the feed), `finish` after."""

    def __init__(self, root: str | os.PathLike, res: CheckResult, reusable_lines: int,
                 fixture: bool = False) -> None:
        self.root, self.res = root, res
        self.reusable_lines = reusable_lines  # verdicts on at most this many lines hold
        self.fixture = fixture
        self.snaps: list[_Snapshot] = []
        self.replay: _Replay | None = None
        self.graph: Graph | None = None  # the fold of the whole log (fixture only)

    # ---- before the feed

    def prepare(self, state: LogState) -> None:
        """List the snapshots, reuse what verdicts hold, load the others; attach the
        replay to the coming feed when it starts where the feed does."""
        known = {(v[0], v[1]): v for v in state.snapshots}
        by_sig = {(v[0], v[2]): v[1] for v in state.snapshots if v[2] is not None}
        for name in self._names():
            snap = _Snapshot(name)
            path = str(Path(self.root, snap.rel))
            try:
                st = os.lstat(path)
            except OSError:
                st = None  # read_regular below says why
            if st is not None and stat.S_ISREG(st.st_mode):
                snap.sig = _signature(st)
                snap.sha = by_sig.get((name, snap.sig)) if snap.sig is not None else None
            try:
                raw = None
                if snap.sha is None:
                    raw = read_regular(self.root, snap.rel)
                    snap.sha = _sha256(raw)
                verdict = known.get((name, snap.sha))
                if verdict is not None and (verdict[3] == BAD or
                                            verdict[4] <= self.reusable_lines):
                    snap.verdict = (name, snap.sha, snap.sig, *verdict[3:])
                    self.snaps.append(snap)
                    continue
                if raw is None:
                    raw = read_regular(self.root, snap.rel)
                    if _sha256(raw) != snap.sha:
                        snap.sig, snap.sha = None, _sha256(raw)
                doc = loads_slow(raw)
                snap.graph, snap.integrity = parse_snapshot(doc)
            except (AgentFileError, JsonError, SnapshotError) as exc:
                if snap.sha is None or isinstance(exc, AgentFileError):
                    snap.sha = snap.sig = None  # unreadable now: decided again next time
                snap.verdict = (name, snap.sha, snap.sig, BAD, 0,
                                f"snapshot unreadable: {exc}")
                self.snaps.append(snap)
                continue
            if snap.integrity.event_id != name:
                snap.verdict = (name, snap.sha, snap.sig, BAD, 0,
                                f"snapshot directory is {name!r} but its integrity names "
                                f"{snap.integrity.event_id!r}")
            self.snaps.append(snap)
        self._plan_replay(state)

    def _names(self) -> Iterator[str]:
        base = str(Path(self.root, "snapshots"))
        if not Path(base).exists():
            return
        if Path(base).is_symlink() or not Path(base).is_dir():
            self.res.fail("snapshots is not a directory", path="snapshots")
            return
        for name in sorted(os.listdir(base)):
            if not Path(base, name).is_dir():
                continue
            if not os.path.lexists(str(Path(base, name, "graph.json"))):
                # An interrupted snapshot: nothing to verify (the reference checker notes it).
                self.res.soft_fail("snapshot directory without graph.json; ignored",
                                   path=f"snapshots/{name}")
                continue
            yield name

    def _open(self) -> list[_Snapshot]:
        return [s for s in self.snaps if s.verdict is None]

    def _plan_replay(self, state: LogState) -> None:
        targets = [s.integrity.line_count for s in self._open()]
        if self.fixture:
            targets.append(-1)  # the whole log
        if not targets:
            return
        low = min((t for t in targets if t >= 0), default=None)
        seed_line, seed = 0, Graph()
        for snap in sorted(self.snaps, key=lambda s: -s.verdict[4] if s.verdict else 0):
            v = snap.verdict
            if v is None or v[3] != SAME or (low is not None and v[4] > low):
                continue
            graph = self._load_graph(snap)
            if graph is not None:
                seed_line, seed = v[4], graph
                break
        self.replay = _Replay(seed, seed_line)
        if seed_line == state.line_count:
            self.replay.attached = True
            state.listeners.append(self.replay.take)

    def _load_graph(self, snap: _Snapshot) -> Graph | None:
        try:
            raw = read_regular(self.root, snap.rel)
            if _sha256(raw) != snap.sha:
                return None
            return parse_snapshot(load_document(raw), copy=False)[0]
        except (AgentFileError, JsonError, SnapshotError):
            return None

    # ---- after the feed

    def finish(self, state: LogState, first_error: int | None) -> None:
        """Decide the open snapshots, then report every snapshot in the reference order:
        the unreadable and misnamed, the integrity mismatches, the differing graphs."""
        open_snaps = self._open()
        self._integrity(state, open_snaps)
        compare = []
        for snap in open_snaps:
            n = snap.integrity.line_count
            if snap.reason is not None:
                snap.verdict = (snap.name, snap.sha, snap.sig, INTEGRITY, n,
                                f"snapshot integrity: {snap.reason}")
            elif first_error is not None and first_error <= n:
                snap.verdict = (snap.name, snap.sha, snap.sig, UNPARSED, n,
                                "snapshot covers lines that do not parse (see check 1)")
            else:
                compare.append(snap)
        replay = self.replay
        for snap in sorted(compare, key=lambda s: s.integrity.line_count):
            assert replay is not None
            n = snap.integrity.line_count
            replay.fold_to(state, n)
            same = replay.graph.same_as(snap.graph)
            snap.verdict = (snap.name, snap.sha, snap.sig, SAME if same else DIFFERS, n, None)
            snap.graph = None
        if self.fixture and replay is not None:
            replay.fold_to(state, state.line_count)
            self.graph = replay.graph
        self._report()

    def _integrity(self, state: LogState, snaps: list[_Snapshot]) -> None:
        if not snaps:
            return
        terminated = state.line_count - (state.last_line is not None)
        ends = []
        for snap in snaps:
            n = snap.integrity.line_count
            end = None
            if n <= terminated:
                end = state.offsets[n] if n < len(state.offsets) else state.length
            ends.append(end)
        digest = hashlib.sha256()
        at = 0
        for end, snap in sorted(((e, s) for e, s in zip(ends, snaps, strict=True)
                                 if e is not None), key=lambda p: p[0]):
            while at < end:
                piece = state.source.read(at, min(end, at + (1 << 22)))
                if not piece:
                    break
                digest.update(piece)
                at += len(piece)
            snap.reason = integrity_mismatch(snap.integrity,
                                             digest.copy().hexdigest() if at == end else None,
                                             _event_id(state, snap.integrity.line_count))
        for end, snap in zip(ends, snaps, strict=True):
            if end is None:
                snap.reason = integrity_mismatch(snap.integrity, None, None)

    def _report(self) -> None:
        examined = [s for s in self.snaps if s.verdict[3] != BAD]
        for snap in self.snaps:
            if snap.verdict[3] == BAD:
                self.res.fail(snap.verdict[5], path=snap.rel)
        for snap in examined:
            if snap.verdict[3] in (INTEGRITY, UNPARSED):
                self.res.fail(snap.verdict[5], path=snap.rel)
        for snap in sorted((s for s in examined if s.verdict[3] in (SAME, DIFFERS)),
                           key=lambda s: s.verdict[4]):
            if snap.verdict[3] == DIFFERS:
                self.res.fail(f"snapshot graph differs from the fold of the first "
                              f"{snap.verdict[4]} lines", path=snap.rel)
        if examined:
            self.res.notes.append(f"{len(examined)} snapshot{'s' * (len(examined) != 1)} "
                                  "examined")

    def verdicts(self, upto_lines: int) -> list[Verdict]:
        """The verdicts a state saved for the first `upto_lines` lines may keep."""
        return [s.verdict for s in self.snaps if s.verdict is not None and s.sha is not None
                and (s.verdict[3] == BAD or s.verdict[4] <= upto_lines)]


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _event_id(state: LogState, line: int) -> str | None:
    event = state.event_at(line)
    return event.id if event is not None else None


class _Replay:
    """The fold on from `graph`, known to equal the fold of the first `line` lines:
    joined to the feed (`take`), or reading the lines it needs from the source."""

    def __init__(self, graph: Graph, line: int) -> None:
        self.graph, self.line = graph, line
        self.attached = False
        self.pending: list[Event] = []

    def take(self, event: Event) -> None:
        """The next valid event of the feed."""
        if event.kind == OPS_KIND:
            self.pending.append(event)

    def fold_to(self, state: LogState, point: int) -> None:
        """Fold the lines up to `point` (at least `self.line`)."""
        if point <= self.line:
            return
        if self.attached:
            cut = 0
            while cut < len(self.pending) and self.pending[cut].line <= point:
                cut += 1
            chunk, self.pending = self.pending[:cut], self.pending[cut:]
        else:
            chunk = _events(state, self.line, point)
        fold(chunk, graph=self.graph)
        self.line = point


def _events(state: LogState, after: int, upto: int) -> list[Event]:
    """The valid ops events on lines after+1..upto, read from the state's source."""
    start = state.offsets[after]
    end = state.offsets[upto] if upto < len(state.offsets) else state.source.size
    out = []
    for number, raw in enumerate(state.source.read(start, end).split(b"\n"), after + 1):
        if number > upto:
            break
        try:
            event = parse_line(raw, number)
        except (EnvelopeError, RecursionError):
            continue
        if event.kind == OPS_KIND:
            out.append(event)
    return out
