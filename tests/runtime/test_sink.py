"""The sink: AgentSink and StateSink over AgentState, on real agent repos."""

from __future__ import annotations

import logging

from git_gasp.protocol.envelope import OPS_KIND, parse_log
from git_gasp.protocol.fold import fold
from git_gasp.runtime.sink import AgentSink, StateSink
from git_gasp.runtime.state import AgentState
from tests.runtime.helpers import assert_conformant


def _events(agent):
    parsed = parse_log((agent / "state/events.jsonl").read_bytes())
    assert not parsed.errors
    return parsed.events


def _folded(agent):
    return fold(_events(agent)).graph


def test_exported_where_agent_state_is():
    import git_gasp
    import git_gasp.runtime

    assert git_gasp.StateSink is StateSink is git_gasp.runtime.StateSink
    assert git_gasp.AgentSink is AgentSink is git_gasp.runtime.AgentSink


def test_state_sink_is_an_agent_sink(agent):
    with StateSink.open(agent, worker_id="w") as sink:
        assert isinstance(sink, AgentSink)
    assert not isinstance(object(), AgentSink)


def test_a_whole_run_through_the_sink_folds_and_checks(agent):
    with StateSink.open(agent, worker_id="w") as sink:
        run = sink.on_run_started("fix retry", goal="Make retry reliable",
                                  metadata={"budget": 3})
        m = sink.on_model_called("gpt-test", provider="fake", input_summary="why?")
        assert sink.on_model_finished(m, output_summary="run the tests",
                                      usage={"input_tokens": 12, "output_tokens": 5}) == m
        t = sink.on_tool_called("pytest", input_summary="pytest -k retry")
        assert sink.on_tool_finished(t, output_summary="1 failed", error="exit 1") == t
        patch = sink.on_patch("persist retry counter", commit="abc1234")
        ev = sink.on_eval("pytest -k retry", "Passed", score=1.0, patch=patch)
        dec = sink.on_decision("Approved", "eval passed", patch=patch)
        assert sink.on_run_finished("promoted") == run
    assert sink.errors == 0 and sink.last_error is None
    g = _folded(agent)
    assert g.nodes[run]["props"]["status"] == "finished"
    assert g.nodes[run]["props"]["outcome"] == "promoted"
    assert g.nodes[run]["props"]["metadata"] == {"budget": 3}
    goal = g.nodes[run]["props"]["goal_id"]
    assert g.nodes[goal]["props"]["title"] == "Make retry reliable"
    model = g.nodes[m]["props"]
    assert model["status"] == "succeeded" and model["success"] is True
    assert model["output_summary"] == "run the tests"
    assert model["usage"] == {"input_tokens": 12, "output_tokens": 5}
    assert type(model["duration_ms"]) is int and model["duration_ms"] >= 0
    tool = g.nodes[t]["props"]
    assert tool["status"] == "failed" and tool["success"] is False
    assert tool["error"] == "exit 1" and tool["output_summary"] == "1 failed"
    assert type(tool["duration_ms"]) is int
    assert g.has_relation(patch, "validated_by", ev)
    assert g.has_relation(patch, "approved_by", dec)
    assert g.nodes[patch]["props"]["status"] == "Promoted"
    for node in (m, t, patch, ev, dec):
        assert g.has_relation(node, "produced_by", run)
    assert_conformant(agent)


def test_correlation_and_causation_are_automatic(agent):
    with StateSink.open(agent, worker_id="w") as sink:
        run = sink.on_run_started("task")
        t = sink.on_tool_called("ls")
        sink.on_tool_finished(t, output_summary="a b")
    events = _events(agent)
    started = next(e for e in events if e.kind == "run.started")
    for e in events:
        if e.kind in ("tool.called", "tool.finished", "run.finished"):
            assert e.correlation_id == run and e.causation_id == started.id
        if e.kind == OPS_KIND:
            assert e.correlation_id in (run, None)


def test_a_failing_callback_returns_none_counts_logs_and_tells(agent, caplog):
    told = []
    state = AgentState.open(agent, "w")
    sink = StateSink(state, on_error=lambda exc, name: told.append((name, exc)))
    with caplog.at_level(logging.WARNING, logger="git_gasp.sink"):
        assert sink.on_tool_called("ls") is None  # no run is open
        assert sink.on_tool_finished(None) is None  # a None call id is ignored, counted
    assert sink.errors == 2
    assert [name for name, _ in told] == ["on_tool_called", "on_tool_finished"]
    assert sink.last_error is told[-1][1]
    assert any("on_tool_called" in r.getMessage() for r in caplog.records)
    state.close()
