"""The local cache of verified snapshot graphs: faster opens, never different ones."""

from __future__ import annotations

import subprocess

import pytest

from git_gasp.runtime import seed as seeds
from git_gasp.runtime.state import AgentState
from git_gasp.runtime.store import LogError, TornLogError


@pytest.fixture
def snapped(agent):
    """An agent repo (a git work tree) with a snapshot 3 batches behind the end."""
    if not (agent / ".git").exists():
        subprocess.run(["git", "init", "-q"], cwd=agent, check=True)
    state = AgentState.open(agent, "w")
    goals = [state.record_goal(f"g{i}") for i in range(6)]
    state.record_task("t", goal=goals[0])
    rel = state.write_snapshot()
    for i in range(3):
        state.record_goal(f"late {i}")
    state.close()
    return agent, rel


def _entries(agent):
    return sorted((agent / ".git").joinpath(*seeds.CACHE_DIR).glob("*.bin"))


def _full(agent):
    return AgentState.open(agent, "w", use_snapshots=False)


def test_second_open_uses_the_cache_and_equals_a_full_fold(snapped):
    agent, rel = snapped
    first = AgentState.open(agent, "w")
    assert first.seeded_from == rel and not first.seed_cached
    assert len(_entries(agent)) == 1
    second = AgentState.open(agent, "w")
    full = _full(agent)
    assert second.seeded_from == rel and second.seed_cached
    assert second.graph.same_as(full.graph) and second.last_event_id == full.last_event_id
    assert second.store.size == full.store.size
    assert second.store.line_count == full.store.line_count
    # the cached open appends where a full open would, and old ids are still found
    first_goal = next(iter(second.graph.nodes))
    second.record_task("t2", goal=first_goal)
    again = AgentState.open(agent, "w")
    assert again.seed_cached and again.graph.same_as(_full(agent).graph)


def test_changed_graph_json_is_never_served_from_the_cache(snapped):
    agent, rel = snapped
    AgentState.open(agent, "w")
    path = agent / rel
    path.write_bytes(path.read_bytes().replace(b'"g1"', b'"G1"'))  # same integrity record
    opened = AgentState.open(agent, "w")
    assert not opened.seed_cached and opened.seeded_from == rel
    assert any(n["props"].get("title") == "G1" for n in opened.graph.nodes.values())


def test_rewritten_log_prefix_defeats_the_cache(snapped):
    agent, rel = snapped
    AgentState.open(agent, "w")
    log = agent / "state/events.jsonl"
    log.write_bytes(log.read_bytes().replace(b'"g0"', b'"G0"'))
    opened = AgentState.open(agent, "w")
    assert opened.seeded_from is None and not opened.seed_cached
    assert any(rel in n and "does not match" in n for n in opened.notes)
    assert opened.graph.same_as(_full(agent).graph)


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage", "empty"])
def test_corrupt_cache_is_ignored(snapped, damage):
    agent, rel = snapped
    AgentState.open(agent, "w")
    (entry,) = _entries(agent)
    blob = entry.read_bytes()
    if damage == "flip":
        blob = blob[:-100] + bytes([blob[-100] ^ 0x20]) + blob[-99:]
    elif damage == "truncate":
        blob = blob[: len(blob) // 2]
    elif damage == "garbage":
        blob = b"gasp-snapshot-cache/1 " + b"x" * 300
    else:
        blob = b""
    entry.write_bytes(blob)
    opened = AgentState.open(agent, "w")
    assert opened.seeded_from == rel and not opened.seed_cached
    assert opened.graph.same_as(_full(agent).graph)
    assert AgentState.open(agent, "w").seed_cached  # rewritten by the slow open


def test_torn_and_bad_tails_are_reported_as_without_the_cache(snapped):
    agent, _rel = snapped
    AgentState.open(agent, "w")
    log = agent / "state/events.jsonl"
    good = log.read_bytes()
    lines = good.count(b"\n")
    log.write_bytes(good + b'{"id":"torn')
    with pytest.raises(TornLogError) as torn:
        AgentState.open(agent, "w")
    assert f":{lines + 1}:" in str(torn.value)
    log.write_bytes(good + b"not json\n")
    with pytest.raises(LogError, match=f":{lines + 1}: not a valid event"):
        AgentState.open(agent, "w")


def test_no_git_dir_means_no_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(seeds, "git_dir", lambda root: None)
    assert seeds.open_fast(tmp_path, tmp_path / "log", "log", []) is None
