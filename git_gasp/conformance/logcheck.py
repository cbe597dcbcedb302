"""One pass over the log for checks 1, 2, 3, 5, 6 and 7: resume the saved state of a
verified prefix (``logstate_cache``) or start empty, feed the lines after it, verify
the snapshots, render the findings, and save the state at HEAD's log blob.

The cold check and the cached re-check are the same feed from different starting
states, so their findings are equal by construction. Without `tip` (check 4's
`TipFacts`) nothing is read from or written to the cache.
"""

from __future__ import annotations

import marshal
from pathlib import Path

from git_gasp.base.record import Record
from git_gasp.conformance.history.tipfacts import EXTENDS, SAME, PendingTip, TipFacts
from git_gasp.conformance.logfindings import Findings, dump_records, findings
from git_gasp.conformance.logsource import LogSource
from git_gasp.conformance.logstate import LogState
from git_gasp.conformance.report import CheckResult
from git_gasp.conformance.saved.lineindex import MAX_LINES
from git_gasp.conformance.saved.logstate_cache import LogStateCache, entry_of
from git_gasp.conformance.snapshot_check import SnapshotCheck
from git_gasp.protocol.gcpause import gc_paused
from git_gasp.protocol.graph import Graph
from git_gasp.protocol.vocab import Vocabulary
from git_gasp.store.agent import AgentRepo

CHUNK = 1 << 24


class LogAnalysis(Record):
    """What the log-reading checks report, from one pass: `snapshots` is check 2's
    snapshot part (failures, soft findings, note); `graph` the fold of the whole log
    (asked for by --fixture); `notes` about the cache; `resumed_lines` the lines the
    saved state held (0: a cold pass); `proof` how the saved state's prefix was proven
    ("facts", "hash")."""

    FIELDS = ("findings", "snapshots", "graph", "notes", "resumed_lines", "proof")

    def __init__(self, findings: Findings, snapshots: CheckResult, graph: Graph | None = None,
                 notes: list[str] | None = None, resumed_lines: int = 0,
                 proof: str | None = None) -> None:
        self.findings, self.snapshots, self.graph = findings, snapshots, graph
        self.notes = [] if notes is None else notes
        self.resumed_lines, self.proof = resumed_lines, proof


def analyze_log(repo: AgentRepo, vocab: Vocabulary, *,
                tip: TipFacts | PendingTip | None = None,
                fixture: bool = False) -> LogAnalysis | None:
    """The findings over `repo`'s log (None when it cannot be read: `repo.log_error`);
    with `tip`, resumed from and saved to the cache of saved states. With a
    `PendingTip` and no saved state to resume, the log is read while check 4 still
    walks, and its state saved once the walk's facts say where HEAD's blob ends."""
    if repo.log_error is not None:
        return None
    cache = None
    if tip is not None and not repo.log_loaded:
        cache = LogStateCache(tip.common_dir, tip.prefix, repo.log_rel)
    source = _source(repo, cache is not None)
    if source is None:
        return None
    with source, gc_paused():
        if isinstance(tip, PendingTip) and cache is not None and _can_resume(cache, source):
            tip = tip.wait()  # a saved state to resume: the walk's facts first
            if tip is None:
                cache = None
        if cache is None:
            return _analyze(repo, vocab, source, None, None, fixture)
        try:
            if isinstance(tip, PendingTip):
                return _analyze_cold(repo, vocab, source, cache, tip, fixture)
            return _analyze(repo, vocab, source, cache, tip, fixture)
        except Exception as exc:  # noqa: BLE001 - a state we cannot use is no state
            analysis = _analyze(repo, vocab, source, None, None, fixture)
            analysis.notes.append(f"the saved log state could not be used and has been "
                                  f"ignored ({type(exc).__name__}: {exc})")
            return analysis


def _source(repo: AgentRepo, from_file: bool) -> LogSource | None:
    if from_file:
        try:
            return LogSource.open(str(Path(repo.root, repo.log_rel)))
        except OSError:
            pass  # read it whole below, which records why it cannot be read
    data = repo.log_bytes
    return None if data is None else LogSource.of_bytes(data)


def _analyze(repo: AgentRepo, vocab: Vocabulary, source: LogSource, cache, tip,
             fixture: bool) -> LogAnalysis:
    state = cache.resume(source, vocab, tip.starts_with) if cache is not None else None
    resumed = state is not None
    if state is None:
        state = LogState(source, vocab)
    start = state.length
    snap_res = CheckResult(2, "replay")
    snaps = SnapshotCheck(repo.root, snap_res, state.old_lines, fixture)
    snaps.prepare(state)
    tail = source.tail(start) if source.data is None else source.data
    if source.data is not None and start:
        tail = tail[start:]
    saved = None
    cut = _save_point(cache, tip, state, tail)
    if cut == start:  # the saved state is HEAD's: saved again only for new verdicts
        saved = _saved_form(state)
        _feed(state, tail, start, 0, len(tail))
    elif cut is not None:
        _feed(state, tail, start, 0, cut - start, final=False)
        saved = _saved_form(state)
        _feed(state, tail, start, cut - start, len(tail))
    else:
        _feed(state, tail, start, 0, len(tail))
    found = findings(state, repo.log_rel)
    snaps.finish(state, found.first_error)
    analysis = LogAnalysis(found, snap_res, snaps.graph,
                           resumed_lines=state.old_lines if resumed else 0)
    if cache is not None:
        analysis.proof = cache.proof
        if cache.note:
            analysis.notes.append(cache.note)
        if saved is not None:
            entry, records, lines = saved
            verdicts = snaps.verdicts(lines)
            if cut != start or verdicts != records["snapshots"]:
                records["snapshots"] = verdicts
                entry.extras = [marshal.dumps(records)]
                cache.save(tip.head_log, entry)
    return analysis


def _can_resume(cache, source: LogSource) -> bool:
    """Whether `cache` holds a saved state that might be a prefix of `source`."""
    return any(0 < length <= source.size for _blob, length in cache.files.ancestors())


def _analyze_cold(repo: AgentRepo, vocab: Vocabulary, source: LogSource, cache,
                  pending: PendingTip, fixture: bool) -> LogAnalysis:
    """`_analyze` from an empty state while check 4 walks: every whole line is fed, then
    the state is saved if HEAD's blob (from the walk's facts) ends exactly there, which
    is the usual case (the working file is HEAD's blob); a working file with further
    whole lines saves nothing this time (the next check does)."""
    state = LogState(source, vocab)
    snap_res = CheckResult(2, "replay")
    snaps = SnapshotCheck(repo.root, snap_res, state.old_lines, fixture)
    snaps.prepare(state)
    tail = source.data if source.data is not None else source.tail(0)
    whole = tail.rfind(b"\n") + 1
    _feed(state, tail, 0, 0, whole, final=False)
    tip = pending.wait()
    saved = None
    if tip is not None and _save_point(cache, tip, LogState(source, vocab), tail) == whole:
        saved = _saved_form(state)
    _feed(state, tail, 0, whole, len(tail))
    found = findings(state, repo.log_rel)
    snaps.finish(state, found.first_error)
    analysis = LogAnalysis(found, snap_res, snaps.graph)
    analysis.proof = cache.proof
    if cache.note:
        analysis.notes.append(cache.note)
    if saved is not None and tip is not None:
        entry, records, lines = saved
        records["snapshots"] = snaps.verdicts(lines)
        entry.extras = [marshal.dumps(records)]
        cache.save(tip.head_log, entry)
    return analysis


def _feed(state: LogState, tail: bytes, at: int, begin: int, end: int, *,
          final: bool = True) -> None:
    """Feed tail[begin:end] (the log's bytes from offset `at + begin`) in pieces of
    about CHUNK bytes cut after a newline, so that a cold pass never holds every line
    of a big log at once."""
    while end - begin > CHUNK:
        cut = tail.rfind(b"\n", begin, begin + CHUNK) + 1
        if cut <= begin:
            cut = tail.find(b"\n", begin + CHUNK, end) + 1
            if cut <= begin:
                break
        state.feed(tail[begin:cut], at + begin, final=False)
        begin = cut
    state.feed(tail[begin:end], at + begin, final=final)


def _save_point(cache, tip: TipFacts | None, state: LogState, tail: bytes) -> int | None:
    """Where a state worth saving ends: HEAD's log blob, when the working file provably
    starts with it, it ends a line, and it goes beyond the state we resumed (or is the
    state we resumed: saved again when a snapshot's verdict is new)."""
    if cache is None or tip is None or tip.head_log is None or tip.head_length is None:
        return None
    if tip.worktree not in (SAME, EXTENDS):
        return None
    cut, start = tip.head_length, state.length
    if cut == start:
        return cut if cache.resumed and cache.resumed[0] == tip.head_log else None
    if not start < cut <= start + len(tail) or tail[cut - start - 1] != 0x0A:
        return None
    if state.line_count + tail.count(b"\n", 0, cut - start) > MAX_LINES:
        return None
    return cut


def _saved_form(state: LogState):
    return entry_of(state), marshal.loads(dump_records(state)), state.line_count
