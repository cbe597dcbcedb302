"""`FirstMatch` answers as testing every range in order would, for any ranges (nested,
overlapping, touching, empty, negative), and `git gasp blame` over 200,000 imported
Agent Trace ranges answers in about the time of the index, not lines x ranges."""

from __future__ import annotations

import json
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from git_gasp.attribution.first_match import FirstMatch
from tests.testing.run import gasp, git, out

RANGES = st.lists(st.tuples(st.integers(-5, 60), st.integers(-5, 60)), max_size=40)


@settings(max_examples=400, deadline=None)
@given(RANGES)
def test_the_first_range_in_order_that_holds_the_line(ranges):
    index = FirstMatch((s, e, n) for n, (s, e) in enumerate(ranges))
    for line in range(-8, 64):
        naive = next((n for n, (s, e) in enumerate(ranges) if s <= line <= e), None)
        assert index(line) == naive, (line, ranges)


def test_huge_and_empty():
    assert FirstMatch([])(1) is None
    index = FirstMatch([(2**62, 2**63 - 1, "far"), (1, 1, "one"), (1, 5, "wide")])
    assert [index(n) for n in (0, 1, 2, 5, 6, 2**63 - 1)] == [None, "one", "wide", "wide",
                                                                None, "far"]


@pytest.mark.slow
def test_blame_over_200000_imported_ranges_is_not_quadratic(agent, tmp_path):
    """The trace of the issue: 20 records of 10,000 ranges on one commit of a 10,000-line
    file; the first record names lines 1-3, the rest lie past the end, so a scan of
    every range for every line (2e9 tests) never finishes within the generous limit."""
    lines = 10_000
    (agent / "big.py").write_text("".join(f"x{i} = {i}\n" for i in range(lines)))
    git(agent, "add", "big.py")
    git(agent, "commit", "-q", "--no-verify", "-m", "big")
    sha = git(agent, "rev-parse", "HEAD").strip()
    records = []
    for r in range(20):
        spans = ([{"start_line": 1, "end_line": 3}] if r == 0 else []) + [
            {"start_line": lines + 1 + k, "end_line": lines + 1 + k} for k in range(9_999)]
        records.append({"version": "0.1.0", "id": f"rec-{r}",
                        "timestamp": "2026-12-01T00:00:00Z",
                        "vcs": {"type": "git", "revision": sha},
                        "files": [{"path": "big.py", "conversations": [
                            {"contributor": {"type": "ai", "model_id": f"model-{r}"},
                             "ranges": spans}]}]})
    trace = tmp_path / "traces.jsonl"
    trace.write_text("".join(json.dumps(rec) + "\n" for rec in records))
    proc = gasp(agent, "import", "agent-trace", str(trace))
    assert proc.returncode == 0, out(proc)
    try:
        proc = subprocess.run(["git", "gasp", "blame", "--json", "big.py"], cwd=agent,
                              capture_output=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("blame scanned every imported range for every line")
    assert proc.returncode == 0, out(proc)
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(rows) == lines
    models = [(r.get("ai") or {}).get("model") for r in rows]
    assert models[:4] == ["model-0", "model-0", "model-0", None]
    assert set(models[3:]) == {None}
