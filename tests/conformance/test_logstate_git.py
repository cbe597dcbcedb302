"""The cached `git gasp check` in real repositories: after a commit (or with appended,
uncommitted lines) it reports exactly what `--no-cache` reports, resuming the state
saved for the committed log; and each input invalidates what it affects."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_gasp.conformance import checks
from git_gasp.conformance.forked import fork_allowed
from git_gasp.conformance.logcheck import analyze_log
from git_gasp.conformance.runner import check_repo
from git_gasp.conformance.saved import index_files
from git_gasp.store.agent import load_agent
from tests.conformance.logcases import PACK, logs
from tests.testing.events import create, goal_pair, line, ops
from tests.testing.repos import copy_repo
from tests.testing.run import git

pytestmark = pytest.mark.slow  # real git, many commits and checks

LOG = "state/events.jsonl"


def _commit(repo: Path, message: str = "c") -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "--allow-empty", "-m", message)


def _report(root: Path, use_cache: bool = True) -> list[dict]:
    """The report as JSON, without check 4's count of commits walked (the cache's)."""
    checks_json = check_repo(root, use_cache=use_cache).to_json()["checks"]
    for c in checks_json:
        if c["number"] == 4:
            c["notes"] = [n for n in c["notes"] if "walked" not in n]
    return checks_json


def _analysis(root: Path):
    """The log analysis a cached run makes (check 4 first, for its facts)."""
    repo = load_agent(root)
    _res, tip = checks.append_only(repo)
    return analyze_log(repo, checks.load_vocabulary(root), tip=tip)


def _states(root: Path) -> list[Path]:
    return sorted((root / ".git" / "gasp").glob("logstate-*.state"))


# ---- cached == cold, over random logs split into two commits --------------------------

@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(data=logs(max_lines=10), where=st.floats(0, 1), commit_tail=st.booleans(),
       pack=st.booleans())
def test_a_cached_check_after_new_lines_reports_what_a_cold_check_does(
        agent_template, data, where, commit_tail, pack):
    ends = [i + 1 for i, byte in enumerate(data) if byte == 0x0A]
    cut = ends[int(where * (len(ends) - 1))] if ends else 0
    with tempfile.TemporaryDirectory() as tmp:
        root = copy_repo(agent_template, Path(tmp) / "agent")
        if pack:
            (root / ".agent" / "packs").mkdir(parents=True, exist_ok=True)
            (root / ".agent" / "packs" / "widgets.json").write_bytes(PACK)
        (root / LOG).write_bytes(data[:cut])
        _commit(root, "prefix")
        first = _report(root)
        assert first == _report(root, use_cache=False)
        (root / LOG).write_bytes(data)
        if commit_tail:
            _commit(root, "tail")
        assert _report(root) == _report(root, use_cache=False)
        assert _report(root) == _report(root, use_cache=False)  # resumed from the new state


# ---- the state is used, and proved without reading the log ------------------------------

def test_after_one_commit_the_state_of_the_parent_blob_is_resumed(agent):
    (agent / LOG).write_bytes(goal_pair(1) + goal_pair(2))
    _commit(agent)
    cold = _analysis(agent)
    assert cold.resumed_lines == 0 and len(_states(agent)) == 1
    with open(agent / LOG, "ab") as fh:
        fh.write(goal_pair(3))
    _commit(agent)
    again = _analysis(agent)
    assert again.resumed_lines == 4 and again.proof == "facts"
    assert [s.name.rsplit("-", 1)[1][:40] for s in _states(agent)] == sorted(
        [git(agent, "rev-parse", f"{rev}:{LOG}").strip() for rev in ("HEAD", "HEAD~1")])


def test_a_resumed_check_reads_only_the_new_lines(agent, monkeypatch):
    from git_gasp.conformance import logsource

    (agent / LOG).write_bytes(b"".join(goal_pair(n) for n in range(1, 40)))
    _commit(agent)
    _analysis(agent)
    with open(agent / LOG, "ab") as fh:
        fh.write(goal_pair(40))
    _commit(agent)
    size = (agent / LOG).stat().st_size
    reads = []
    real = logsource.os.pread
    monkeypatch.setattr(logsource.os, "pread",
                        lambda fd, n, at: reads.append((at, n)) or real(fd, n, at))
    log = _analysis(agent)
    assert log.resumed_lines == 78 and log.proof == "facts"
    assert sum(n for _at, n in reads) < 2 * len(goal_pair(40)) + 100
    assert all(at >= size - 4 * len(goal_pair(40)) for at, _n in reads)
    monkeypatch.undo()
    assert _report(agent) == _report(agent, use_cache=False)


def test_a_forward_reference_made_good_by_a_later_commit_is_reported_by_both(agent):
    """Failures whose text depends on later lines come out right after a resume."""
    (agent / LOG).write_bytes(
        line("e_goal", "goal.created", {"id": "goal_1", "status": "Open"})
        + line("e_note", "note.added", {}, "e_later")
        + ops("e_ops", None, create("goal_2", "goal")))
    _commit(agent)
    first = _report(agent)
    assert "names no event in the log" in json.dumps(first)
    with open(agent / LOG, "ab") as fh:
        fh.write(line("e_later", "run.started", {}, "e_goal")
                 + ops("e_pair", "e_goal", create("goal_1", "goal", status="Open"))
                 + ops("e_pair2", "e_goal", create("goal_1", "goal", status="Open"))
                 + line("e_g2", "goal.created", {"id": "goal_2"}))
    _commit(agent)
    text = json.dumps(_report(agent))
    assert "names a later event (line 4)" in text
    assert "is claimed by 2 ops events (lines 5, 6)" in text
    assert "restates entity 'goal_2', created by domain event e_g2" in text
    assert _report(agent) == _report(agent, use_cache=False)


# ---- what invalidates what ------------------------------------------------------------

def test_a_rewritten_prefix_is_never_trusted(agent):
    (agent / LOG).write_bytes(goal_pair(1) + goal_pair(2))
    _commit(agent)
    _report(agent)
    # rewrite history: same length, the first event changed in place
    data = (agent / LOG).read_bytes().replace(b"goal 1", b"goal X", 1)
    (agent / LOG).write_bytes(data + goal_pair(3))
    _commit(agent, "rewritten")
    log = _analysis(agent)
    assert log.resumed_lines == 0
    assert _report(agent) == _report(agent, use_cache=False)


def test_an_uncommitted_rewrite_is_never_trusted(agent):
    (agent / LOG).write_bytes(goal_pair(1) + goal_pair(2))
    _commit(agent)
    _report(agent)
    data = (agent / LOG).read_bytes()
    (agent / LOG).write_bytes(data.replace(b"event_g1o", b"event_g1x", 1))
    assert _analysis(agent).resumed_lines == 0
    assert _report(agent) == _report(agent, use_cache=False)


def test_a_pack_change_rechecks_only_vocabulary_and_only_when_it_matters(agent):
    (agent / LOG).write_bytes(goal_pair(1) + line("e_w", "note.added", {})
                              + ops("e_wo", None, create("w1", "widget")))
    _commit(agent)
    before = _report(agent)
    assert not before[2]["passed"] and "'widget' is not in the baseline" in json.dumps(before[2])
    (agent / ".agent" / "packs").mkdir(parents=True, exist_ok=True)
    (agent / ".agent" / "packs" / "widgets.json").write_bytes(PACK)
    after = _report(agent)
    assert after == _report(agent, use_cache=False)
    assert "lacks required prop size" in json.dumps(after[2])
    (agent / ".agent" / "packs" / "other.json").write_bytes(
        json.dumps({"object_types": {"unused": {}}}).encode())  # decides nothing the log uses
    assert _report(agent) == _report(agent, use_cache=False)


def _snapshot(agent: Path, lines: int) -> Path:
    from git_gasp.protocol.envelope import parse_log
    from git_gasp.protocol.fold import fold
    from git_gasp.store.snapshots import write_snapshot

    data = (agent / LOG).read_bytes()
    parsed = parse_log(data)
    events = [e for e in parsed.events if e.line <= lines]
    rel, _ = write_snapshot(agent, data, fold(events).graph, lines, events[-1].id)
    return agent / rel


def test_snapshots_added_changed_and_kept_are_verified_as_a_cold_check_does(agent):
    (agent / LOG).write_bytes(b"".join(goal_pair(n) for n in range(1, 6)))
    first = _snapshot(agent, 4)
    _commit(agent)
    assert _report(agent) == _report(agent, use_cache=False)
    assert "1 snapshot examined" in json.dumps(_report(agent))
    with open(agent / LOG, "ab") as fh:
        fh.write(goal_pair(6))
    second = _snapshot(agent, 12)  # a new snapshot over the new lines: replayed from the first
    _commit(agent)
    assert _report(agent) == _report(agent, use_cache=False)
    doc = json.loads(first.read_bytes())
    doc["graph"]["nodes"]["goal_1"]["props"]["title"] = "forged"
    first.write_text(json.dumps(doc))  # same integrity record, another graph
    text = json.dumps(_report(agent))
    assert "snapshot graph differs from the fold of the first 4 lines" in text
    assert _report(agent) == _report(agent, use_cache=False)
    shutil.rmtree(first.parent)
    assert _report(agent) == _report(agent, use_cache=False)
    assert second.exists()


def test_a_moved_log_starts_afresh(agent):
    (agent / LOG).write_bytes(goal_pair(1))
    _commit(agent)
    _report(agent)
    manifest = (agent / "AGENT.md").read_text()
    (agent / "state" / "moved.jsonl").write_bytes((agent / LOG).read_bytes() + goal_pair(2))
    (agent / "AGENT.md").write_text(manifest.replace(
        "executor:", "locations:\n  log: state/moved.jsonl\nexecutor:", 1))
    _commit(agent, "moved")
    log = _analysis(agent)
    assert log.resumed_lines == 0
    assert _report(agent) == _report(agent, use_cache=False)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "flipped", "empty"])
def test_a_corrupt_state_counts_as_none_and_says_so(agent, damage):
    (agent / LOG).write_bytes(goal_pair(1) + goal_pair(2))
    _commit(agent)
    clean = _report(agent)
    [path] = _states(agent)
    data = path.read_bytes()
    path.write_bytes({"garbage": b"\x00garbage\n" * 40, "truncated": data[:-7],
                      "flipped": data[:-30] + bytes([data[-30] ^ 1]) + data[-29:],
                      "empty": b""}[damage])
    noted = _report(agent)
    assert noted[0]["notes"] == ["the saved log state was corrupt and has been ignored"]
    noted[0]["notes"] = []
    assert noted == clean
    assert _report(agent) == clean  # rewritten by the run that ignored it


def test_no_cache_neither_reads_nor_writes_a_state(agent, monkeypatch):
    (agent / LOG).write_bytes(goal_pair(1))
    _commit(agent)
    _report(agent, use_cache=False)
    assert _states(agent) == []
    _report(agent)
    [path] = _states(agent)
    path.write_bytes(b"garbage")
    report = _report(agent, use_cache=False)
    assert report[0]["notes"] == [] and path.read_bytes() == b"garbage"


def test_a_kept_snapshots_verdict_is_reused_and_its_stat_spares_reading_it(agent, monkeypatch):
    from git_gasp.conformance import snapshot_check

    (agent / LOG).write_bytes(b"".join(goal_pair(n) for n in range(1, 6)))
    snap = _snapshot(agent, 6)
    _commit(agent)
    _report(agent)
    with open(agent / LOG, "ab") as fh:
        fh.write(goal_pair(6))
    _commit(agent)
    parsed, read = [], []
    real_parse, real_read = snapshot_check.loads_slow, snapshot_check.read_regular
    monkeypatch.setattr(snapshot_check, "loads_slow", lambda raw: parsed.append(1)
                        or real_parse(raw))
    monkeypatch.setattr(snapshot_check, "read_regular", lambda root, rel: read.append(rel)
                        or real_read(root, rel))
    monkeypatch.setattr(snapshot_check, "_RACY_NS", 0)  # the file counts as old enough
    assert "1 snapshot examined" in json.dumps(_report(agent))
    assert parsed == [] and read == ["snapshots/event_g3o/graph.json"]  # hashed, not parsed
    with open(agent / LOG, "ab") as fh:
        fh.write(goal_pair(7))
    _commit(agent)
    read.clear()
    assert "1 snapshot examined" in json.dumps(_report(agent))
    assert parsed == [] and read == []  # its lstat is the one recorded with its hash
    snap.write_bytes(snap.read_bytes().replace(b'"goal 1"', b'"goal Z"'))
    assert "differs from the fold of the first 6 lines" in json.dumps(_report(agent))
    assert parsed


def test_a_snapshot_added_without_a_commit_is_verified_once(agent, monkeypatch):
    from git_gasp.conformance import snapshot_check

    (agent / LOG).write_bytes(b"".join(goal_pair(n) for n in range(1, 4)))
    _commit(agent)
    _report(agent)
    _snapshot(agent, 4)  # not committed: the log's state is saved again with its verdict
    assert "1 snapshot examined" in json.dumps(_report(agent))
    parsed = []
    real = snapshot_check.loads_slow
    monkeypatch.setattr(snapshot_check, "loads_slow", lambda raw: parsed.append(1) or real(raw))
    assert "1 snapshot examined" in json.dumps(_report(agent))
    assert parsed == []


def test_several_commits_since_the_last_check_are_proven_by_check_4(agent):
    (agent / LOG).write_bytes(goal_pair(1))
    _commit(agent)
    _report(agent)
    for n in (2, 3, 4):
        with open(agent / LOG, "ab") as fh:
            fh.write(goal_pair(n))
        _commit(agent, f"c{n}")
    log = _analysis(agent)
    assert (log.resumed_lines, log.proof) == (2, "facts")


def test_after_a_merge_the_saved_state_is_proven_by_hashing(agent):
    (agent / LOG).write_bytes(goal_pair(1))
    _commit(agent)
    _report(agent)
    git(agent, "checkout", "-q", "-b", "side")
    with open(agent / LOG, "ab") as fh:
        fh.write(goal_pair(2))
    _commit(agent, "side")
    git(agent, "checkout", "-q", "-")
    git(agent, "merge", "-q", "--no-ff", "--no-edit", "--no-verify", "side")
    log = _analysis(agent)
    assert (log.resumed_lines, log.proof) == (2, "hash")
    assert _report(agent) == _report(agent, use_cache=False)


def test_tip_facts_follow_proven_pairs_to_the_chain():
    from git_gasp.conformance.history.tipfacts import EXTENDS, TipFacts

    a, b, c, d = (x * 40 for x in (b"a", b"b", b"c", b"d"))
    tip = TipFacts("", b"", b"log", c, 10, EXTENDS, [c], {(a, b), (b, c), (d, a)})
    assert tip.starts_with(c) and tip.starts_with(b) and tip.starts_with(a)
    assert tip.starts_with(d) and not tip.starts_with(b"e" * 40)
    tip.worktree = None  # the working file was not shown to extend HEAD: nothing holds
    assert not tip.starts_with(c)


@pytest.mark.parametrize("forked", [True, False])
def test_the_first_cached_check_saves_heads_state_beside_the_walk(agent, monkeypatch, forked):
    """A first `git gasp check` reads the log while check 4 walks (in a forked child)
    and saves the state at HEAD's blob once the walk says where it ends; one process
    does the same in turn. Either way the next check resumes it."""
    if not forked:
        monkeypatch.setenv("GASP_NO_FORK", "1")
    (agent / LOG).write_bytes(goal_pair(1) + goal_pair(2))
    _commit(agent)
    for state in _states(agent):
        state.unlink()
    first = _report(agent)
    head_blob = git(agent, "rev-parse", f"HEAD:{LOG}").strip()
    assert [s.name.rsplit("-", 1)[1][:40] for s in _states(agent)] == [head_blob]
    assert first == _report(agent, use_cache=False)
    with open(agent / LOG, "ab") as fh:
        fh.write(goal_pair(3))
    _commit(agent)
    assert _analysis(agent).resumed_lines == 4


@pytest.mark.skipif(not fork_allowed(), reason="no safe fork here: the walk runs first")
def test_uncommitted_whole_lines_beside_the_walk_save_nothing_but_report_alike(agent):
    """The working file extends HEAD's blob by whole lines: the cold pass beside the walk
    cannot stop at HEAD's end after the fact, so it saves no state this time, and its
    findings are those of `--no-cache`."""
    (agent / LOG).write_bytes(goal_pair(1))
    _commit(agent)
    for state in _states(agent):
        state.unlink()
    with open(agent / LOG, "ab") as fh:
        fh.write(goal_pair(2) + b'{"broken": \n')
    report = _report(agent)
    assert report == _report(agent, use_cache=False)
    assert not report[0]["passed"]  # the broken line, check 1
    assert _states(agent) == []


# ---- commit after commit: the states saved as deltas ---------------------------------

def _base_of(path: Path) -> bytes:
    """The blob id the state file extends (b"-": a whole state)."""
    return path.read_bytes().split(b"\n", 1)[0].split(b" ")[-5]


def _step(n: int) -> bytes:
    """Commit n's lines: a goal pair, then lines the checks fail (an id used again, a
    cause not seen yet, a line that is no event, a second claim of goal 1)."""
    out = goal_pair(n)
    if n % 2:
        out += line("event_g1", "note.added", {}) + line(f"e_fwd{n}", "note.added", {},
                                                         f"e_fwd{n + 1}")
    else:
        out += line(f"e_fwd{n}", "note.added", {}) + b"not an event\n"
    if n % 3 == 0:
        out += ops(f"e_claim{n}", "event_g1", create("goal_1", "goal", title="goal 1",
                                                     status="Open"))
    return out


def test_commit_after_commit_the_cached_check_reports_what_no_cache_reports(agent,
                                                                           monkeypatch):
    monkeypatch.setattr(index_files, "SPREAD", 0)  # deltas however big, against a small log
    (agent / LOG).write_bytes(_step(1))
    _commit(agent)
    assert _report(agent) == _report(agent, use_cache=False)
    for n in range(2, 9):
        with open(agent / LOG, "ab") as fh:
            fh.write(_step(n))
        _commit(agent)
        cached = _report(agent)
        assert cached == _report(agent, use_cache=False)
        assert not all(c["passed"] for c in cached)
        assert _analysis(agent).resumed_lines == (agent / LOG).read_bytes().count(b"\n")
    head = git(agent, "rev-parse", f"HEAD:{LOG}").strip()
    states = {p.name.rsplit("-", 1)[1][:40]: p for p in _states(agent)}
    assert _base_of(states[head]) == git(agent, "rev-parse", f"HEAD~1:{LOG}").strip().encode()
    # a rewritten (non-append) log is never resumed from a saved state
    data = (agent / LOG).read_bytes()
    (agent / LOG).write_bytes(data.replace(b"goal 2", b"goal Y", 1) + _step(9))
    _commit(agent, "rewritten")
    assert _analysis(agent).resumed_lines == 0
    assert _report(agent) == _report(agent, use_cache=False)
    with open(agent / LOG, "ab") as fh:
        fh.write(_step(10))
    _commit(agent)
    assert _report(agent) == _report(agent, use_cache=False)
    assert _analysis(agent).resumed_lines > 0


@pytest.mark.parametrize("which", ["base", "delta"])
def test_a_damaged_file_of_a_chain_counts_as_none_and_says_so(agent, which, monkeypatch):
    monkeypatch.setattr(index_files, "SPREAD", 0)
    (agent / LOG).write_bytes(_step(1))
    _commit(agent)
    _report(agent)
    with open(agent / LOG, "ab") as fh:
        fh.write(_step(2))
    _commit(agent)
    clean = _report(agent)
    blob = git(agent, "rev-parse", f"{'HEAD~1' if which == 'base' else 'HEAD'}:{LOG}").strip()
    [path] = [p for p in _states(agent) if blob in p.name]
    data = path.read_bytes()
    at = len(data) - 3
    path.write_bytes(data[:at] + bytes([data[at] ^ 4]) + data[at + 1:])
    noted = _report(agent)
    assert noted[0]["notes"] == ["the saved log state was corrupt and has been ignored"]
    noted[0]["notes"] = []
    assert noted == clean == _report(agent, use_cache=False)
