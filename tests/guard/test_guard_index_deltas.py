"""The guard's committed-log indexes saved as deltas, commit after commit: each staged
log is judged as without a cache, the staged blob's index is a delta against HEAD's,
and a damaged base makes the guard index the log itself."""

from __future__ import annotations

import pytest

from git_gasp.conformance.saved import index_files
from git_gasp.guard.commit_guard import run_guard
from tests.testing.events import goal_pair, line
from tests.testing.run import git

LOG = "state/events.jsonl"


def _judge(agent) -> list[str]:
    cached = [r.to_text() for r in run_guard(agent)]
    assert cached == [r.to_text() for r in run_guard(agent, cache=False)]
    return cached


def _facts(agent) -> dict[str, bytes]:
    """blob id -> the base its index file extends (b"-": a whole one)."""
    return {p.stem.rsplit("-", 1)[1]: p.read_bytes().split(b"\n", 1)[0].split(b" ")[-5]
            for p in (agent / ".git" / "gasp").glob("guard-*.facts")}


def _blob(agent, rev: str) -> str:
    return git(agent, "rev-parse", f"{rev}:{LOG}").strip()


@pytest.fixture
def chained(agent, monkeypatch):
    monkeypatch.setattr(index_files, "SPREAD", 0)  # deltas however big, for a small log
    monkeypatch.chdir(agent)
    with open(agent / LOG, "ab") as f:
        f.write(goal_pair(1))
    git(agent, "add", LOG)
    assert _judge(agent) == []
    git(agent, "commit", "-q", "--no-verify", "-m", "1")
    return agent


def test_commit_after_commit_the_cached_guard_judges_as_without_a_cache(chained):
    agent = chained
    for n in range(2, 9):
        with open(agent / LOG, "ab") as f:
            f.write(goal_pair(n))
        git(agent, "add", LOG)
        assert _judge(agent) == []
        staged = git(agent, "rev-parse", f":{LOG}").strip()
        assert _facts(agent)[staged] == _blob(agent, "HEAD").encode()
        with open(agent / LOG, "ab") as f:  # refused: an id used again, a cause unknown
            f.write(line("event_g1", "note.added", {}, f"event_g{n}")
                    + line("e_x", "note.added", {}, "nope"))
        git(agent, "add", LOG)
        refusals = _judge(agent)
        assert "is used again (first on line 1)" in refusals[0]
        assert "names no event in the log" in refusals[-1]
        git(agent, "checkout", "HEAD", "--", LOG)
        with open(agent / LOG, "ab") as f:
            f.write(goal_pair(n))
        git(agent, "add", LOG)
        git(agent, "commit", "-q", "--no-verify", "-m", str(n))


def test_a_damaged_base_of_the_heads_index_is_no_index(chained):
    agent = chained
    for n in (2, 3):
        with open(agent / LOG, "ab") as f:
            f.write(goal_pair(n))
        git(agent, "add", LOG)
        assert _judge(agent) == []
        git(agent, "commit", "-q", "--no-verify", "-m", str(n))
    base = _facts(agent)[_blob(agent, "HEAD")].decode()
    assert base == _blob(agent, "HEAD~1")  # a delta against HEAD~1's index
    [path] = (agent / ".git" / "gasp").glob(f"guard-*-{base}.facts")
    data = path.read_bytes()
    path.write_bytes(data[:-5] + bytes([data[-5] ^ 1]) + data[-4:])
    with open(agent / LOG, "ab") as f:
        f.write(line("event_g2", "note.added", {}, "event_g1"))
    git(agent, "add", LOG)
    [refusal] = _judge(agent)
    assert "is used again (first on line 3)" in refusal
