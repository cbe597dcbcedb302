"""The queries behind the tools, in process (no SDK): search, the ready queue, id
resolution, recall, and `[mcp]` of .agent/config.toml."""

from __future__ import annotations

import pytest

from git_gasp.base.errors import UsageError
from git_gasp.mcp import ready, recall, search
from git_gasp.mcp.service import Service
from git_gasp.protocol.graph import Graph
from git_gasp.runtime.memory import Facts


def node(graph: Graph, nid: str, kind: str, **props) -> str:
    graph.put_node(nid, {"id": nid, "kind": kind, "props": props, "tombstoned": False,
                         "stale": False, "artifacts": []})
    return nid


def rel(graph: Graph, src: str, name: str, dst: str) -> None:
    graph.add_relation({"from": src, "rel": name, "to": dst, "props": {}})


def test_ready_leaves_out_what_is_blocked_depends_closed_or_not_open():
    g = Graph()
    goal = node(g, "goal_1", "goal", title="g", status="Open")
    done_goal = node(g, "goal_2", "goal", title="closed by a patch", status="Active")
    free = node(g, "task_1", "task", title="free", status="Open")
    blocked = node(g, "task_2", "task", title="blocked", status="Open")
    waits = node(g, "task_3", "task", title="depends", status="InProgress")
    unblocked = node(g, "task_4", "task", title="its blocker is done", status="Open")
    node(g, "task_5", "task", title="done", status="Done")
    node(g, "task_6", "task", title="blocked status", status="Blocked")
    blocker = node(g, "failure_1", "failure", summary="open failure", status="Open")
    gone = node(g, "failure_2", "failure", summary="resolved", status="Resolved")
    patch = node(g, "patch_1", "patch", title="p", status="Promoted")
    proposed = node(g, "patch_2", "patch", title="q", status="Proposed")
    rel(g, free, "serves", goal)
    rel(g, blocker, "blocks", blocked)
    rel(g, waits, "depends_on", blocked)
    rel(g, gone, "blocks", unblocked)
    rel(g, patch, "advances", done_goal)
    rel(g, proposed, "advances", goal)
    out = ready.ready(g)
    assert [r["id"] for r in out["ready"]] == [goal, free, unblocked]
    assert out["ready"][1]["serves"] == [goal]
    assert {b["id"]: b["blocked_by"] for b in out["blocked"]} == {
        blocked: [blocker], waits: [blocked]}
    limited = ready.ready(g, 2)
    assert len(limited["ready"]) == 2 and limited["more"]


def test_search_words_kinds_status_ranked_newest_first_and_limit(agent):
    from git_gasp.runtime.state import AgentState

    with AgentState.open(agent, "w") as st:
        goal = st.record_goal("Parser speed")
        task = st.record_task("profile the PARSER", goal=goal, status="InProgress")
        run = st.start_run("speed work", goal=goal, metadata={"person": "Ada <ada@x>",
                                                              "agent": "codex"})
        call = st.record_tool_call("parser")  # a tool_call: not a default kind
        obs = st.record_observation("parser is slow on big files")
        st.finish_run("done")
    st = Service(agent, "w").state()
    out = search.search(st, "parser")
    assert [r["id"] for r in out["results"]] == [obs, task, goal]  # all score alike
    log = (agent / "state" / "events.jsonl").read_bytes().splitlines()
    for r in out["results"]:  # each hit's line holds its event
        assert f'"id":"{r["event"]}"'.encode() in log[r["line"] - 1]
    assert out["results"][0]["run"] == run
    assert search.search(st, "slow parser")["results"][0]["id"] == obs
    assert search.search(st, "parser speed")["results"][0]["id"] == goal  # the phrase first
    assert [r["id"] for r in search.search(st, "parser", ["tool_call"])["results"]] == [call]
    assert [r["id"] for r in search.search(st, "parser", status="inprogress")["results"]] \
        == [task]
    assert search.search(st, task)["results"][0]["id"] == task  # ids match too
    assert [r["id"] for r in search.search(st, "parser", run=run)["results"]] == [obs]
    assert [r["id"] for r in search.search(st, "parser", person="ADA")["results"]] == [obs]
    assert search.search(st, "parser", agent="claude")["results"] == []
    assert search.search(st, "parser", since_ms=2**62)["results"] == []
    one = search.search(st, "parser", limit=1)
    assert len(one["results"]) == 1 and one["more"]
    for bad in ({"query": ""}, {"query": "x", "limit": 0}, {"query": "x", "limit": 201},
                {"query": "x", "limit": True}, {"query": "x", "since_ms": "today"},
                {"query": "x", "run": "run_nope"}):
        with pytest.raises(UsageError):
            search.search(st, **bad)
    with pytest.raises(UsageError, match="unknown node kind 'nope'"):
        search.search(st, "x", ["nope"])


def test_service_ids_prefixes_ambiguity_and_sources(agent):
    from git_gasp.runtime.state import AgentState

    with AgentState.open(agent, "w") as st:
        goal = st.record_goal("one")
        other = st.record_goal("two")
        task = st.record_task("t", goal=goal)
    service = Service(agent, "w")
    assert service.node_id(goal) == goal
    assert service.node_id(goal[:-4]) == goal
    assert service.node_id("..." + goal[-8:]) == goal
    with pytest.raises(UsageError, match="ambiguous"):
        service.node_id("goal_")
    with pytest.raises(UsageError, match="no node 'goal_zz'"):
        service.node_id("goal_zz")
    with pytest.raises(UsageError, match="is a task, not a patch"):
        service.node_id(task, "patch")
    event = service.state().creator_of(other)
    assert service.source_ids([goal[:-3], event[:-3]]) == [goal, event]
    with pytest.raises(UsageError, match="neither an event nor a node"):
        service.source_ids(["event_nope"])
    with pytest.raises(UsageError):
        service.source_ids([])


def test_recall_live_facts_only_newest_first(agent):
    from git_gasp.runtime.state import AgentState

    with AgentState.open(agent, "w") as st:
        goal = st.record_goal("learn")
        facts = Facts(st)
        old = facts.add("Regex compiles are slow", [goal])
        facts.supersede(old, "Regex compiles are slow; cache them", [goal])
        facts.add("Unrelated fact", [goal])
        out = recall.recall(st, "regex")
        assert [f["text"] for f in out["facts"]] == ["Regex compiles are slow; cache them"]
        assert out["facts"][0]["supersedes"] == old
        assert [f["text"] for f in recall.recall(st, "")["facts"]] == [
            "Unrelated fact", "Regex compiles are slow; cache them"]


def test_the_service_records_what_the_hooks_queued_before_it_answers(agent):
    """A hook's payload queued after the server started (its drainer not run yet) is in
    the state the next answer reads."""
    import json

    from git_gasp.adapters.agent_hook.queue_files import enqueue, queued
    from git_gasp.adapters.session_writer import run_id_for

    service = Service(agent, "w")
    gdir = str(agent / ".git" / "gasp")
    enqueue(gdir, "claude-code", json.dumps({"session_id": "s-mcp", "cwd": str(agent),
                                             "hook_event_name": "SessionStart"}).encode())
    assert not service._state.graph.has_node(run_id_for("claude-code", "s-mcp"))
    assert service.state().graph.has_node(run_id_for("claude-code", "s-mcp"))
    assert not queued(gdir)
