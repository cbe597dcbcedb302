"""The incremental log state gives exactly the whole-log checks' findings: started
empty over the whole log (the cold check), and saved at any line then resumed over the
rest (a cached re-check), with the packs changed in between or not."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_gasp.conformance import checks
from git_gasp.conformance.logcheck import LogAnalysis
from git_gasp.conformance.logfindings import dump_records, findings
from git_gasp.conformance.logsource import LogSource
from git_gasp.conformance.logstate import LogState
from git_gasp.conformance.report import CheckResult
from git_gasp.conformance.saved.index_files import Entry
from git_gasp.conformance.saved.logstate_cache import entry_of, restore
from git_gasp.store.agent import AgentRepo
from tests.conformance import oracle
from tests.conformance.logcases import PACK, logs

pytestmark = pytest.mark.slow  # hypothesis

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])
LOG = "state/events.jsonl"


@pytest.fixture(scope="module")
def roots(tmp_path_factory):
    """An agent root without packs and one with the widgets pack."""
    plain = tmp_path_factory.mktemp("plain")
    packed = tmp_path_factory.mktemp("packed")
    (packed / ".agent" / "packs").mkdir(parents=True)
    (packed / ".agent" / "packs" / "widgets.json").write_bytes(PACK)
    return {False: plain, True: packed}


def _repo(root, data: bytes) -> AgentRepo:
    repo = AgentRepo(root=root, log_rel=LOG)
    repo.log_bytes = data
    return repo


def _analysis(state: LogState) -> LogAnalysis:
    return LogAnalysis(findings(state, LOG), CheckResult(2, "replay"))


def _results(repo: AgentRepo, log: LogAnalysis, packs_root) -> list:
    packs = checks._result(3)
    checks.load_vocabulary(packs_root, packs)
    out = [checks.check_envelope(repo, log), checks.check_replay(repo, log),
           checks.check_vocabulary(repo, log, packs), checks.check_causation(repo, log),
           checks.check_pairing(repo, log)]
    return [r.to_json() for r in out] + [len(log.findings.skips)]


def _reference(repo: AgentRepo, packs_root) -> list:
    out = [oracle.check_envelope(repo), oracle.check_replay(repo),
           oracle.check_vocabulary(repo, packs_root), oracle.check_causation(repo),
           oracle.check_pairing(repo)]
    return [r.to_json() for r in out] + [oracle.skipped_count(repo)]


def _cold(data: bytes, vocab) -> LogState:
    state = LogState(LogSource.of_bytes(data), vocab)
    state.feed(data, 0)
    return state


def _resumed(data: bytes, cut: int, vocab_before, vocab_after) -> LogState:
    """Fed the lines before byte `cut`, saved, restored over `data`, fed the rest."""
    state = LogState(LogSource.of_bytes(data), vocab_before)
    state.feed(data[:cut], 0, final=False)
    entry = entry_of(state)
    saved = Entry(entry.length, entry.line_count, entry.keys, entry.offsets,
                  [dump_records(state)])
    again = restore(LogSource.of_bytes(data), vocab_after, saved)
    again.feed(data[cut:], cut)
    return again


@SETTINGS
@given(data=logs(), packs=st.booleans())
def test_a_cold_pass_reports_what_the_whole_log_checks_report(roots, data, packs):
    root = roots[packs]
    repo = _repo(root, data)
    vocab = checks.load_vocabulary(root)
    assert _results(repo, _analysis(_cold(data, vocab)), root) == _reference(repo, root)


@SETTINGS
@given(data=logs(), where=st.floats(0, 1), before=st.booleans(), after=st.booleans())
def test_a_state_saved_at_any_line_and_resumed_reports_the_same(roots, data, where, before,
                                                               after):
    ends = [i + 1 for i, byte in enumerate(data) if byte == 0x0A]
    cut = ends[int(where * (len(ends) - 1))] if ends else 0
    repo = _repo(roots[after], data)
    state = _resumed(data, cut, checks.load_vocabulary(roots[before]),
                     checks.load_vocabulary(roots[after]))
    assert _results(repo, _analysis(state), roots[after]) == _reference(repo, roots[after])


@SETTINGS
@given(data=logs(), cuts=st.lists(st.floats(0, 1), min_size=2, max_size=4))
def test_resumed_again_and_again_reports_the_same(roots, data, cuts):
    """A state saved from a resumed state (commit after commit) keeps every finding."""
    ends = [i + 1 for i, byte in enumerate(data) if byte == 0x0A]
    if not ends:
        return
    points = sorted({ends[int(c * (len(ends) - 1))] for c in cuts})
    vocab = checks.load_vocabulary(roots[True])
    state = LogState(LogSource.of_bytes(data), vocab)
    at = 0
    for point in points:
        state.feed(data[at:point], at, final=False)
        entry = entry_of(state)
        state = restore(LogSource.of_bytes(data), vocab, Entry(
            entry.length, entry.line_count, entry.keys, entry.offsets, [dump_records(state)]))
        at = point
    state.feed(data[at:], at)
    repo = _repo(roots[True], data)
    assert _results(repo, _analysis(state), roots[True]) == _reference(repo, roots[True])


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=logs(), where=st.floats(0, 1))
def test_keys_that_all_collide_change_no_finding(roots, data, where, monkeypatch):
    """Every key names a line to confirm by parsing it: with every crc32 equal, each
    lookup reads more lines, and the findings stay the same."""
    from git_gasp.conformance.saved import lineindex

    monkeypatch.setattr(lineindex.zlib, "crc32", lambda _data: 0)
    ends = [i + 1 for i, byte in enumerate(data) if byte == 0x0A]
    cut = ends[int(where * (len(ends) - 1))] if ends else 0
    vocab = checks.load_vocabulary(roots[True])
    repo = _repo(roots[True], data)
    state = _resumed(data, cut, vocab, vocab)
    assert _results(repo, _analysis(state), roots[True]) == _reference(repo, roots[True])


# ---- snapshots and the saved state, with check 4's facts given by hand ----------------

def _blob(data: bytes) -> bytes:
    import hashlib

    return hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest().encode()


def _tip(root, data: bytes):
    from git_gasp.conformance.history.tipfacts import EXTENDS, TipFacts

    return TipFacts(str(root / "gitdir"), b"", LOG.encode(), _blob(data), len(data), EXTENDS,
                    [_blob(data)])


def _write_snapshot(root, data: bytes, n: int, how: str) -> None:
    """A snapshot of the first `n` lines of `data`: true, forged, misnamed, of another
    log, naming the wrong event, unreadable, or a directory without graph.json."""
    import os

    from git_gasp.protocol.envelope import parse_log
    from git_gasp.protocol.fold import fold
    from git_gasp.protocol.snapshot import SnapshotError
    from git_gasp.store.snapshots import write_snapshot

    name = f"s{n}{how}"
    base = root / "snapshots"
    if how == "empty":
        (base / name).mkdir(parents=True, exist_ok=True)
        return
    if how == "garbage":
        (base / name).mkdir(parents=True, exist_ok=True)
        (base / name / "graph.json").write_bytes(b"{not json")
        return
    source = data.replace(b'"e1"', b'"e7"') if how == "other log" else data
    parsed = parse_log(source)
    graph = fold([e for e in parsed.events if e.line <= n]).graph
    if how == "forged":
        graph.version += 1
    last = next((e.id for e in parsed.events if e.line == n), name)
    event_id = {"misnamed": "elsewhere", "wrong event": name}.get(how, last)
    try:
        rel, _ = write_snapshot(root, source, graph, n, event_id)
    except SnapshotError:
        return
    if how == "misnamed" and not (base / name).exists():
        os.rename((root / rel).parent, base / name)


snapshot_kinds = st.sampled_from(["true", "true", "forged", "misnamed", "other log",
                                  "wrong event", "garbage", "empty"])


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(data=logs(), where=st.floats(0, 1),
       before=st.lists(st.tuples(st.floats(0, 1), snapshot_kinds), max_size=3),
       after=st.lists(st.tuples(st.floats(0, 1), snapshot_kinds), max_size=2),
       fixture=st.booleans(), chunk=st.sampled_from([1 << 24, 1, 40, 300]))
def test_snapshot_verdicts_saved_and_resumed_match_the_whole_log_check(
        monkeypatch, data, where, before, after, fixture, chunk):
    import tempfile
    from pathlib import Path

    from git_gasp.conformance import logcheck
    from git_gasp.conformance.logcheck import analyze_log
    from git_gasp.store.agent import load_agent

    monkeypatch.setattr(logcheck, "CHUNK", chunk)  # the feed in pieces of this size

    ends = [i + 1 for i, byte in enumerate(data) if byte == 0x0A]
    cut = ends[int(where * (len(ends) - 1))] if ends else 0
    prefix = data[:cut]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "state").mkdir()
        (root / LOG).write_bytes(prefix)
        lines_before = prefix.count(b"\n")
        for at, how in before:
            if lines_before:
                _write_snapshot(root, prefix, 1 + int(at * (lines_before - 1)), how)
        vocab = checks.load_vocabulary(root)
        first = analyze_log(load_agent(root), vocab, tip=_tip(root, prefix), fixture=fixture)
        assert first is not None and first.resumed_lines == 0
        (root / LOG).write_bytes(data)
        lines_after = data.count(b"\n")
        for at, how in after:
            if lines_after:
                _write_snapshot(root, data, 1 + int(at * (lines_after - 1)), how)
        repo = load_agent(root)
        resumed = analyze_log(repo, vocab, tip=_tip(root, prefix), fixture=fixture)
        assert resumed is not None
        if cut:
            assert resumed.resumed_lines == lines_before
        cold_repo = load_agent(root)
        cold = analyze_log(cold_repo, vocab, fixture=fixture)
        want = oracle.check_replay(cold_repo).to_json()
        assert checks.check_replay(repo, resumed).to_json() == want
        assert checks.check_replay(cold_repo, cold).to_json() == want
        if fixture:
            assert resumed.graph.same_as(oracle.fold_graph(cold_repo))
            assert cold.graph.same_as(oracle.fold_graph(cold_repo))
