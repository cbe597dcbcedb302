"""AgentState: pairing, validation, transitions, runs, snapshots, policies, behaviours."""

from __future__ import annotations

import pytest

from git_gasp.base.errors import GaspError
from git_gasp.protocol.envelope import OPS_KIND, parse_log
from git_gasp.protocol.fold import fold
from git_gasp.runtime.policy import ApprovalRequired, PolicyDenied
from git_gasp.runtime.state import AgentState, StateError, create_node, relate, update_node
from git_gasp.runtime.transitions import TransitionError
from tests.runtime.helpers import assert_conformant


def _log(agent):
    parsed = parse_log((agent / "state/events.jsonl").read_bytes())
    assert not parsed.errors
    return parsed.events


def _spine(state):
    g = state.record_goal("Make retry reliable", "retries drop state", metadata={"prio": 1})
    r = state.start_run("fix retry skill", goal=g, metadata={"budget": 3})
    o = state.record_observation("retry loses counter", about=g)
    f = state.record_failure("state dropped after timeout", observation=o)
    h = state.record_hypothesis("counter not persisted", explains=f)
    p = state.propose_patch("persist retry counter", advances=g, addresses=f, hypothesis=h,
                            commit="abc1234", skill="retry")
    t = state.record_tool_call("cargo test", input_summary="cargo test retry")
    state.finish_tool_call(t, output_summary="ok, 1 passed", success=True)
    e = state.record_eval("cargo test retry", "Passed", score=1.0, validates=p)
    d = state.record_decision("Approved", "eval passed; promote", patch=p)
    state.finish_run("promoted")
    return {"goal": g, "run": r, "obs": o, "failure": f, "hyp": h, "patch": p, "tool": t,
            "eval": e, "decision": d}


def test_spine_is_paired_chained_and_conformant(agent):
    state = AgentState.open(agent, "w")
    ids = _spine(state)
    events = _log(agent)
    by_id = {e.id: e for e in events}
    started = next(e for e in events if e.kind == "run.started")
    for e in events:
        if e.kind == OPS_KIND:
            assert by_id[e.causation_id].kind != OPS_KIND
        elif e.correlation_id == ids["run"] and e.kind != "run.started":
            assert e.causation_id == started.id  # events in a run chain to run.started
    assert started.causation_id == events[0].id  # run serves the goal: caused by goal.created
    g = state.graph
    assert g.nodes[ids["patch"]]["props"]["status"] == "Promoted"
    assert g.nodes[ids["goal"]]["props"]["metadata"] == {"prio": 1}  # metadata persisted
    assert g.nodes[ids["run"]]["props"]["metadata"] == {"budget": 3, "person": "Test Author"}
    assert g.nodes[ids["tool"]]["props"]["status"] == "succeeded"  # finish updates the node
    assert g.nodes[ids["tool"]]["props"]["output_summary"] == "ok, 1 passed"
    assert g.has_relation(ids["patch"], "validated_by", ids["eval"])
    assert g.has_relation(ids["patch"], "approved_by", ids["decision"])
    assert g.nodes[ids["run"]]["props"]["status"] == "finished"
    # the in-memory graph is exactly the fold of the log
    assert fold(events).graph.same_as(state.graph)
    assert_conformant(agent)


def test_invalid_ops_are_never_written(agent):
    state = AgentState.open(agent, "w")
    g = state.record_goal("g")
    before = (agent / "state/events.jsonl").read_bytes()
    bad = [
        [update_node("nope", {"a": 1})],
        [relate(g, "advances", "nope")],
        [create_node(g, "goal", {})],
        [create_node("x_1", "unicorn", {})],
        [relate(g, "befriends", g)],
        [{"CreateNode": {"id": "y"}}],
        [create_node("z_1", "goal", {}), update_node("missing", {})],  # atomic: all or nothing
    ]
    for ops in bad:
        with pytest.raises(StateError):
            state.apply_ops(ops)
    with pytest.raises(StateError):
        state.record_eval("t", "Passed", validates="patch_missing")
    assert (agent / "state/events.jsonl").read_bytes() == before
    assert "z_1" not in state.graph.nodes


def test_transitions_are_validated(agent):
    state = AgentState.open(agent, "w")
    g = state.record_goal("g")
    p = state.propose_patch("p", advances=g)
    state.record_decision("Approved", "ok", patch=p)
    with pytest.raises(TransitionError, match="already Promoted"):
        state.record_decision("Approved", "again", patch=p)
    state.update_status(p, "Reverted")
    with pytest.raises(TransitionError, match="final status"):
        state.update_status(p, "Proposed")
    assert state.update_status(g, "achieved") == "Achieved"
    with pytest.raises(TransitionError):
        state.update_status(g, "Open")
    r = state.start_run("t")
    with pytest.raises(StateError, match="still open"):
        state.start_run("t2")
    state.finish_run("done")
    with pytest.raises(StateError, match="already finished"):
        state.finish_run("again", run_id=r)
    with pytest.raises(StateError, match="needs an open run"):
        state.record_tool_call("x")
    with pytest.raises(StateError, match="needs a cause"):
        state.record_eval("x", "Passed")
    assert_conformant(agent)


def test_unfinished_run_is_recovered_on_open(agent):
    state = AgentState.open(agent, "w")
    r = state.start_run("long job")
    state.record_observation("half way")
    again = AgentState.open(agent, "w")
    assert again.run is not None and again.run.run_id == r
    o = again.record_observation("resumed")
    events = _log(agent)
    obs = next(e for e in events if e.kind == "observation.created" and e.payload["id"] == o)
    assert obs.correlation_id == r and obs.causation_id == again.run.event_id
    again.finish_run("done")
    assert AgentState.open(agent, "w").run is None
    assert_conformant(agent)


def test_model_call_outcome_and_artifacts(agent):
    state = AgentState.open(agent, "w")
    state.start_run("t")
    m = state.record_model_call("claude", provider="anthropic", input_summary="plan")
    state.finish_model_call(m, output_summary="a plan", success=False, metadata={"tokens": 12})
    with pytest.raises(StateError, match="already finished"):
        state.finish_model_call(m)
    state.attach_artifact(m, kind="transcript", uri="transcripts/x.jsonl.gz", hash="sha256:00")
    s = state.record_project_snapshot(commit="abc", summary="tree at start")
    state.finish_run("done")
    props = state.graph.nodes[m]["props"]
    assert props["status"] == "failed" and props["success"] is False
    assert props["outcome_metadata"] == {"tokens": 12} and props["model"] == "claude"
    assert state.graph.nodes[m]["artifacts"][0]["uri"] == "transcripts/x.jsonl.gz"
    assert state.graph.nodes[s]["kind"] == "project_snapshot"
    assert_conformant(agent)


def test_open_seeds_from_snapshot_and_matches_full_fold(agent):
    state = AgentState.open(agent, "w")
    for i in range(20):
        state.record_goal(f"g{i}")
    rel = state.write_snapshot()
    for i in range(5):
        state.record_goal(f"late {i}")
    seeded = AgentState.open(agent, "w")
    full = AgentState.open(agent, "w", use_snapshots=False)
    assert seeded.seeded_from == rel
    assert seeded.graph.same_as(full.graph) and seeded.last_event_id == full.last_event_id
    # old ids are still found (lazy index of the covered prefix)
    first_goal = next(iter(seeded.graph.nodes))
    seeded.record_task("t", goal=first_goal)
    assert_conformant(agent)


def test_tampered_snapshot_is_ignored(agent):
    state = AgentState.open(agent, "w")
    for i in range(4):
        state.record_goal(f"g{i}")
    rel = state.write_snapshot()
    log = agent / "state/events.jsonl"
    data = log.read_bytes()
    log.write_bytes(data.replace(b'"g0"', b'"G0"'))  # a rewritten prefix
    reopened = AgentState.open(agent, "w")
    assert reopened.seeded_from is None
    assert any(rel in n and "does not match" in n for n in reopened.notes)


def test_policies_gate_nodes_relations_and_promotion(agent):
    (agent / ".agent/config.toml").write_text(
        '[executor]\nmodel = ""\n[policy.nodes]\nframe = "deny"\nhypothesis = "require_approval"\n'
        '[policy.relations]\naddresses = "deny"\n'
        "[policy.promotion]\nmin_evals = 2\nmin_pass_rate = 1.0\n")
    state = AgentState.open(agent, "w")
    with pytest.raises(PolicyDenied, match="frame"):
        state.record_frame("f")
    with pytest.raises(ApprovalRequired):
        state.record_hypothesis("h")
    with state.approval("alice"):
        state.record_hypothesis("h")
    g = state.record_goal("g")
    p = state.propose_patch("p", advances=g)
    state.record_eval("t", "Passed", validates=p)
    with pytest.raises(PolicyDenied, match="at least 2 eval"):
        state.record_decision("Approved", "ship", patch=p)
    state.record_eval("t", "Failed", validates=p)
    with pytest.raises(PolicyDenied, match="pass rate"):
        state.record_decision("Approved", "ship", patch=p)
    state.record_decision("Rejected", "failed once", patch=p)
    assert state.graph.nodes[p]["props"]["status"] == "Rejected"
    assert_conformant(agent)


def test_behaviours_chain_to_trigger_and_declare_their_kinds(agent):
    state = AgentState.open(agent, "w")
    state.declare_kind("lesson", required_props=["text"], description="a learned lesson")

    def on_failed_eval(st, event):
        if event.payload["status"] == "Failed":
            st.record_node("lesson", {"text": f"{event.payload['command']} failed"},
                           relations=[("derived_from", event.payload["id"])])

    state.on("eval.*", on_failed_eval)
    g = state.record_goal("g")
    state.start_run("t", goal=g)
    p = state.propose_patch("p", advances=g)
    state.record_eval("pytest", "Failed", validates=p)
    state.finish_run("failed")
    events = _log(agent)
    trigger = next(e for e in events if e.kind == "eval.finished")
    lesson = next(e for e in events if e.kind == "lesson.created")
    assert lesson.causation_id == trigger.id
    assert (agent / ".agent/packs/gasp-runtime.json").exists()
    assert_conformant(agent)


def test_missing_manifest_is_one_clear_error(agent):
    (agent / "AGENT.md").unlink()
    with pytest.raises(GaspError, match="AGENT.md is missing"):
        AgentState.open(agent, "w")


def test_track_record(agent):
    state = AgentState.open(agent, "w")
    g = state.record_goal("g")
    for i, ok in enumerate([False, False, True, True, True, True]):
        p = state.propose_patch(f"p{i}", advances=g, skill="retry")
        state.record_eval("t", "Passed" if ok else "Failed", validates=p)
    rec = state.track_record("retry").to_json()
    assert rec["sample_size"] == 6 and rec["passed"] == 4 and rec["patches"] == 6
    assert rec["trend"] == "improving" and abs(rec["pass_rate"] - 4 / 6) < 1e-9
