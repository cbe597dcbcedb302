"""The local cache of verified snapshot graphs: faster opens, never different ones."""

from __future__ import annotations

import subprocess

import pytest

from git_gasp.runtime import seed as seeds
from git_gasp.runtime.state import AgentState
from git_gasp.store.append import LogError, TornLogError


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
    # Issue 10: a snapshot is never an authority. The edited graph (its integrity record
    # kept) used to be trusted; now it is checked against the fold of its prefix, found
    # forged, and the log is folded instead (it was seeded_from == rel with "G1" before).
    assert not opened.seed_cached and opened.seeded_from is None
    assert not any(n["props"].get("title") == "G1" for n in opened.graph.nodes.values())
    assert any(rel in n and "not trusted" in n for n in opened.notes)


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
    monkeypatch.setattr(seeds, "find_git_dir", lambda root: None)
    assert seeds.open_fast(tmp_path, tmp_path / "log", "log", []) is None


# --- the lazily loaded graph of a cached open ----------------------------------------------
import json  # noqa: E402

from git_gasp.protocol.fold import apply_op  # noqa: E402
from git_gasp.protocol.graph import Graph  # noqa: E402
from git_gasp.protocol.ops import parse_op  # noqa: E402


def _cached(agent):
    AgentState.open(agent, "w").close()  # writes the cache entry
    state = AgentState.open(agent, "w")
    assert state.seed_cached
    return state


def _dump(graph):
    return json.dumps(graph.to_json(), sort_keys=False)


def test_cached_open_is_lazy_but_every_view_is_whole(snapped):
    agent, _rel = snapped
    state = _cached(agent)
    for entry in _entries(agent):
        entry.unlink()
    full = AgentState.open(agent, "w")  # seeded the slow way: the same node order
    assert full.seeded_from and not full.seed_cached
    assert state.graph.is_lazy
    assert state.graph.node_count() == len(full.graph.nodes)
    assert list(state.graph.node_ids()) == list(full.graph.nodes)
    # C-level consumers only ever get the fully loaded containers, in the same order
    assert _dump(state.graph) == _dump(full.graph)
    assert not state.graph.is_lazy
    assert dict(state.graph.nodes) == full.graph.nodes
    assert list(state.graph.relations) == full.graph.relations
    assert state.graph.same_as(_full(agent).graph)


def test_lazy_state_records_and_queries_like_a_full_one(snapped):
    agent, _rel = snapped
    state = _cached(agent)
    full = _full(agent)
    goal = next(iter(full.graph.nodes))
    assert state.lineage(goal).to_json() == full.lineage(goal).to_json()
    state = _cached(agent)
    task = state.record_task("t-lazy", goal=goal)  # relates to a node still unloaded
    state.start_run("lazy run", goal=goal)
    state.record_observation("seen", about=task)
    state.finish_run("done")
    assert state.graph.same_as(_full(agent).graph)
    again = _cached(agent)
    assert again.graph.has_node(task) and again.graph.node(task)["props"]["title"] == "t-lazy"
    assert again.lineage(task).to_json() == _full(agent).lineage(task).to_json()
    assert again.graph.same_as(_full(agent).graph)


def test_snapshot_written_from_a_lazy_state_is_the_full_one(snapped):
    agent, _rel = snapped
    lazy = _cached(agent)
    rel = lazy.write_snapshot()
    before = (agent / rel).read_bytes()
    assert _full(agent).write_snapshot() == rel  # identical content: left alone, no error
    assert (agent / rel).read_bytes() == before
    assert _cached(agent).graph.same_as(_full(agent).graph)


def test_run_recovery_from_the_cache_matches_a_full_open(snapped):
    agent, _rel = snapped
    state = AgentState.open(agent, "w")
    state.start_run("before the snapshot")
    finished_later = state.run.run_id
    state.close()
    state = AgentState.open(agent, "w")
    state.write_snapshot()
    state.finish_run("done in the tail")
    state.start_run("in the tail")
    state.close()
    lazy, full = _cached(agent), _full(agent)
    assert lazy.run is not None and lazy.run == full.run and lazy.run.run_id != finished_later
    assert lazy.notes == full.notes
    # an unfinished run that the tail never touches is found from the cache entry alone
    lazy.finish_run("closed")
    lazy.close()
    state = AgentState.open(agent, "w")
    state.start_run("left open")
    open_id = state.run.run_id
    state.write_snapshot()
    state.record_goal("tail only")
    state.close()
    lazy, full = _cached(agent), _full(agent)
    assert lazy.graph.is_lazy and lazy.run == full.run and lazy.run.run_id == open_id


def test_old_cache_format_is_replaced(snapped):
    agent, rel = snapped
    AgentState.open(agent, "w")
    (entry,) = _entries(agent)
    blob = entry.read_bytes()
    entry.write_bytes(blob.replace(b"gasp-snapshot-cache/2", b"gasp-snapshot-cache/1", 1))
    opened = AgentState.open(agent, "w")
    assert opened.seeded_from == rel and not opened.seed_cached
    assert AgentState.open(agent, "w").seed_cached


def _lazy_copy(graph):
    from git_gasp.runtime.seed import _dumps_graph, _load_graph

    return _load_graph(memoryview(_dumps_graph(graph)))[0]


def test_lazy_graph_ops_match_eager_ones():
    eager = Graph()
    ops = [{"CreateNode": {"id": f"n{i}", "kind": "goal", "props": {"i": i}}} for i in range(5)]
    ops += [{"CreateRelation": {"from": "n0", "rel": "r", "to": f"n{i}", "props": {}}}
            for i in range(1, 4)]
    for op in ops:
        apply_op(eager, *parse_op(op))
    lazy = _lazy_copy(eager)
    assert lazy.is_lazy and lazy._rels is None
    tail = [{"CreateRelation": {"from": "n4", "rel": "r", "to": "n1", "props": {}}},
            {"UpdateNode": {"id": "n2", "props": {"x": 1}}},
            {"CreateNode": {"id": "n1", "kind": "task", "props": {}}},  # re-created in place
            {"CreateNode": {"id": "n9", "kind": "goal", "props": {}}},
            {"AttachArtifact": {"id": "n3", "artifact": {
                "kind": "file", "uri": "a", "hash": "h", "summary": "", "metadata": {}}}}]
    for op in tail:
        apply_op(eager, *parse_op(op))
        apply_op(lazy, *parse_op(op))
    assert lazy.is_lazy and lazy._rels is None  # nothing forced a full load
    assert sorted(set(lazy.touched())) == ["n1", "n2", "n3", "n9"]
    assert lazy.has_node("n0") and not lazy.has_node("zz") and lazy.node("zz") is None
    assert _dump(lazy) == _dump(eager) and lazy.same_as(eager)
    lazy = _lazy_copy(eager)
    for graph in (eager, lazy):
        apply_op(graph, *parse_op({"DeleteRelation": {"from": "n0", "rel": "r", "to": "n2"}}))
    assert _dump(lazy) == _dump(eager)
    assert _dump(_lazy_copy(Graph())) == _dump(Graph())
