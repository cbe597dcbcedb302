"""The end state a hook saves (`runtime/endstate.py`): the next open folds only the lines
after it, and reaches exactly what a full open of the log does."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from git_gasp.runtime import endstate
from git_gasp.runtime.state import AgentState
from git_gasp.store.append import LogError


@pytest.fixture
def saved(agent):
    """An agent repo whose state, a run with goals and tasks, saved its end state."""
    if not (agent / ".git").exists():
        subprocess.run(["git", "init", "-q"], cwd=agent, check=True)
    state = AgentState.open(agent, "w")
    state.start_run("work")
    goals = [state.record_goal(f"g{i}") for i in range(4)]
    state.record_task("t", goal=goals[0])
    assert state.save_end_state() is None
    state.close()
    return agent


def _entry(agent):
    found = sorted((agent / ".git").joinpath(*endstate.DIR).glob("*.bin"))
    assert len(found) == 1
    return found[0]


def _same(a: AgentState, b: AgentState) -> None:
    assert a.graph.same_as(b.graph)
    assert (a.last_event_id, a.store.size, a.store.line_count) == (
        b.last_event_id, b.store.size, b.store.line_count)
    b.creator_of("nothing")  # the full index of both
    a.creator_of("nothing")
    assert a._creator == b._creator and a._event_ids == b._event_ids
    assert (a.run.run_id, a.run.event_id) == (b.run.run_id, b.run.event_id)


def test_an_open_from_the_end_state_equals_a_full_open(saved):
    state = AgentState.open(saved, "w", end_state=True)
    assert endstate.load(saved, state.store.rel, state.store.path) is not None
    _same(state, AgentState.open(saved, "w"))
    # it appends where a full open would, and old ids are still found
    goal = next(n for n, v in state.graph.nodes.items() if v["kind"] == "goal")
    state.record_task("t2", goal=goal)
    state.close()
    _same(AgentState.open(saved, "w", end_state=True), AgentState.open(saved, "w"))


def test_lines_appended_after_the_entry_are_folded_on_top(saved):
    other = AgentState.open(saved, "other")  # a writer that saves no end state
    other.record_goal("later")
    other.close()
    state = AgentState.open(saved, "w", end_state=True)
    assert state.last_event_id == other.last_event_id
    _same(state, AgentState.open(saved, "w"))


def test_a_rewritten_log_is_read_whole(saved):
    log = saved / "state" / "events.jsonl"
    data = log.read_bytes()
    assert b'"g1"' in data
    log.write_bytes(data.replace(b'"g1"', b'"G1"'))  # same length, other bytes
    state = AgentState.open(saved, "w", end_state=True)
    assert endstate.load(saved, state.store.rel, state.store.path) is None
    assert any(n.get("props", {}).get("title") == "G1" for n in state.graph.nodes.values())
    _same(state, AgentState.open(saved, "w"))


def test_a_shorter_log_is_read_whole(saved):
    log = saved / "state" / "events.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:-2]))
    state = AgentState.open(saved, "w", end_state=True)
    assert state.store.line_count == len(lines) - 2
    _same(state, AgentState.open(saved, "w"))


@pytest.mark.parametrize("damage", ["truncate", "flip", "python", "empty"])
def test_a_damaged_entry_is_ignored(saved, damage):
    entry = _entry(saved)
    blob = entry.read_bytes()
    blob = {"truncate": blob[:-10], "flip": blob[:-5] + b"\x00" + blob[-4:],
            "python": blob.replace(b" py3.", b" py2.", 1), "empty": b""}[damage]
    entry.write_bytes(blob)
    state = AgentState.open(saved, "w", end_state=True)
    assert endstate.load(saved, state.store.rel, state.store.path) is None
    _same(state, AgentState.open(saved, "w"))


def test_a_torn_tail_is_refused_as_a_full_open_refuses_it(saved):
    log = saved / "state" / "events.jsonl"
    log.write_bytes(log.read_bytes() + b'{"id":"torn')
    with pytest.raises(LogError) as cached:
        AgentState.open(saved, "w", end_state=True)
    with pytest.raises(LogError) as full:
        AgentState.open(saved, "w")
    assert str(cached.value) == str(full.value)


def test_an_open_without_end_state_does_not_read_it(saved):
    entry = _entry(saved)
    state = AgentState.open(saved, "w")
    entry.write_bytes(b"garbage")
    assert AgentState.open(saved, "w").graph.same_as(state.graph)


def test_saving_again_extends_the_checked_prefix_and_still_catches_a_rewrite(saved):
    """Saving after appending reads only the lines appended since the open checked the
    log (the CRC of the prefix it verified, extended), and the entry it writes still
    fails when the log's earlier bytes changed in between: the next open reads whole."""
    state = AgentState.open(saved, "w", end_state=True)
    goal = next(n for n, v in state.graph.nodes.items() if v["kind"] == "goal")
    state.record_task("t2", goal=goal)
    assert state.save_end_state() is None
    state.close()
    again = AgentState.open(saved, "w", end_state=True)
    assert endstate.load(saved, again.store.rel, again.store.path) is not None
    _same(again, AgentState.open(saved, "w"))
    again.record_task("t3", goal=goal)
    log = Path(again.store.path)
    data = log.read_bytes()
    assert data.count(b'"g1"') >= 1  # same length, other bytes, before what this open checked
    log.write_bytes(data.replace(b'"g1"', b'"h1"'))
    assert again.save_end_state() is None
    again.close()
    assert endstate.load(saved, again.store.rel, again.store.path) is None
    full = AgentState.open(saved, "w")
    assert any(n.get("props", {}).get("title") == "h1" for n in full.graph.nodes.values())
    _same(AgentState.open(saved, "w", end_state=True), full)
