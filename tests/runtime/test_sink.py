"""The sink: AgentSink and StateSink over AgentState, on real agent repos."""

from __future__ import annotations

import json
import logging
from concurrent.futures import ThreadPoolExecutor

import pytest

from git_gasp.base.errors import GaspError
from git_gasp.protocol.envelope import OPS_KIND, parse_log
from git_gasp.protocol.fold import fold
from git_gasp.runtime.commit import commit_run
from git_gasp.runtime.sink import AgentSink, StateSink
from git_gasp.runtime.state import AgentState, StateError
from tests.runtime.helpers import assert_conformant
from tests.testing.run import gasp, git, out


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
    assert g.nodes[run]["props"]["metadata"] == {"budget": 3, "person": "Test Author"}
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


# --- the call nodes: duration, error, usage ---------------------------------------------------


class _Clock:
    """A fake time.monotonic_ns for the sink: deterministic durations."""

    def __init__(self) -> None:
        self.ns = 10**12

    def __call__(self) -> int:
        return self.ns


def test_duration_is_measured_from_the_calls_start(agent, monkeypatch):
    clock = _Clock()
    monkeypatch.setattr("git_gasp.runtime.sink.time.monotonic_ns", clock)
    with StateSink.open(agent, worker_id="w") as sink:
        run = sink.on_run_started("task")
        m = sink.on_model_called("m")
        clock.ns += 1_500 * 10**6
        t = sink.on_tool_called("ls")
        clock.ns += 250 * 10**6
        sink.on_tool_finished(t)
        sink.on_model_finished(m, error=RuntimeError("rate limited"))
        clock.ns += 1_000 * 10**6
        sink.on_run_finished()
    g = _folded(agent)
    assert g.nodes[t]["props"]["duration_ms"] == 250
    assert g.nodes[m]["props"]["duration_ms"] == 1_750
    assert g.nodes[m]["props"]["error"] == "RuntimeError: rate limited"
    assert g.nodes[m]["props"]["status"] == "failed"
    assert g.nodes[run]["props"]["duration_ms"] == 2_750
    finished = [e for e in _events(agent) if e.kind == "model.finished"]
    assert finished[0].payload["duration_ms"] == 1_750 and finished[0].payload["success"] is False


def test_duration_of_a_call_started_elsewhere_comes_from_the_node(agent):
    state = AgentState.open(agent, "w")
    state.start_run("task")
    t = state.record_tool_call("ls")
    assert type(state.graph.nodes[t]["props"]["started_ts_ms"]) is int
    sink = StateSink(state)  # a sink that did not see the call start
    assert sink.on_tool_finished(t, output_summary="ok") == t
    props = state.graph.nodes[t]["props"]
    assert type(props["duration_ms"]) is int and props["duration_ms"] >= 0
    assert props["status"] == "succeeded" and "error" not in props
    state.close()


def test_runtime_finish_keywords_and_payload_shapes(agent):
    state = AgentState.open(agent, "w")
    rid = state.start_run("task")
    m = state.record_model_call("m")
    state.finish_model_call(m, output_summary="x", usage={"total_tokens": 3}, duration_ms=7)
    t = state.record_tool_call("t")
    state.finish_tool_call(t, success=True, error="boom")  # an error means failed
    state.finish_run("failed", error="tool t failed")
    g = state.graph
    assert g.nodes[m]["props"]["usage"] == {"total_tokens": 3}
    assert g.nodes[m]["props"]["duration_ms"] == 7
    assert g.nodes[t]["props"]["success"] is False and g.nodes[t]["props"]["error"] == "boom"
    run = g.nodes[rid]["props"]
    assert run["error"] == "tool t failed" and type(run["duration_ms"]) is int
    by_kind = {e.kind: e.payload for e in _events(agent)}
    assert by_kind["tool.finished"]["error"] == "boom"
    assert by_kind["model.finished"]["usage"] == {"total_tokens": 3}
    assert by_kind["run.finished"]["error"] == "tool t failed"
    assert fold(_events(agent)).graph.nodes == g.nodes
    state.close()
    assert_conformant(agent)


def test_metadata_and_usage_a_framework_fills_are_made_json(agent):
    class Opaque:
        def __str__(self) -> str:
            return "opaque object"

    with StateSink.open(agent, worker_id="w") as sink:
        sink.on_run_started("task")
        m = sink.on_model_called("m", metadata={"obj": Opaque(), 1: float("nan"),
                                                "list": (1, 2.5, None)})
        sink.on_model_finished(m, usage={"input_tokens": 3, "detail": Opaque()},
                               metadata=["not", "a", "dict"])
    assert sink.errors == 0, sink.last_error
    props = _folded(agent).nodes[m]["props"]
    assert props["metadata"] == {"obj": "opaque object", "1": "nan", "list": [1, 2.5, None]}
    assert props["usage"] == {"input_tokens": 3, "detail": "opaque object"}
    assert props["outcome_metadata"] == {"value": ["not", "a", "dict"]}
    assert_conformant(agent)


# --- runs ------------------------------------------------------------------------------


def test_a_run_finished_with_an_error_is_failed_on_one_line(agent):
    with StateSink.open(agent, worker_id="w") as sink:
        r1 = sink.on_run_started("one", goal=None)
        sink.on_run_finished(error="Traceback (most recent call last):\n  boom\nValueError")
        r2 = sink.on_run_started("two\nlines")
        sink.on_run_finished("done\nwith  detail")
        r3 = sink.on_run_started("three")
        sink.on_run_finished("timed out", error="budget")
    g = _folded(agent)
    one = g.nodes[r1]["props"]
    assert one["outcome"] == "failed"
    assert one["error"] == "Traceback (most recent call last): boom ValueError"
    assert g.nodes[r2]["props"]["outcome"] == "done with detail"
    assert g.nodes[r2]["props"]["task"] == "two lines"
    assert g.nodes[r3]["props"]["outcome"] == "timed out"  # an explicit outcome is kept
    assert sink.errors == 0
    assert_conformant(agent)


def test_goal_is_an_id_or_a_title(agent):
    state = AgentState.open(agent, "w")
    goal = state.record_goal("existing goal")
    sink = StateSink(state)
    run = sink.on_run_started("task", goal=goal)
    assert state.graph.nodes[run]["props"]["goal_id"] == goal
    sink.on_run_finished()
    t = state.record_task("a task")
    assert sink.on_run_started("task", goal=t) is None  # a node that is not a goal
    assert "not a goal" in str(sink.last_error)
    goals = [n for n in state.graph.nodes.values() if n["kind"] == "goal"]
    assert len(goals) == 1
    state.close()


def test_a_second_run_of_the_sink_is_refused_but_a_stale_one_is_abandoned(agent):
    state = AgentState.open(agent, "w")
    stale = state.start_run("crashed earlier")
    state.close()
    with StateSink.open(agent, worker_id="w2") as sink:
        assert sink.state.run.run_id == stale  # resumed on open
        run = sink.on_run_started("new run")
        assert run is not None and run != stale
        assert sink.on_run_started("nested") is None and sink.errors == 1
        assert sink.on_run_started("taken id", run_id=stale) is None  # nothing abandoned
    g = _folded(agent)
    assert g.nodes[stale]["props"]["outcome"] == "abandoned"
    assert g.nodes[run]["props"]["outcome"] == "succeeded"
    assert_conformant(agent)


def test_finishing_without_a_run_or_twice_is_counted_not_raised(agent):
    with StateSink.open(agent, worker_id="w") as sink:
        assert sink.on_run_finished() is None
        sink.on_run_started("task")
        t = sink.on_tool_called("ls")
        assert sink.on_tool_finished(t) == t
        assert sink.on_tool_finished(t) is None  # already finished
        assert sink.on_model_finished(t) is None  # a tool call, not a model call
    assert sink.errors == 3


def test_spine_callbacks_link_patch_eval_decision(agent):
    with StateSink.open(agent, worker_id="w") as sink:
        sink.on_run_started("task", goal="g")
        p = sink.on_patch("a patch", summary="why", skill="retry")
        assert sink.on_patch("bad", nonsense=1) is None  # an unknown link keyword
        e = sink.on_eval("pytest", "Failed", score=0.0, patch=p)
        d = sink.on_decision("Rejected", "tests fail", patch=p)
    g = _folded(agent)
    assert g.nodes[p]["props"]["status"] == "Rejected"
    assert g.has_relation(p, "validated_by", e) and g.has_relation(p, "rejected_by", d)
    assert g.nodes[e]["props"]["status"] == "Failed"
    assert sink.errors == 1
    assert_conformant(agent)


# --- errors never break the agent ----------------------------------------------------------


def test_an_on_error_handler_that_raises_is_swallowed(agent, caplog):
    def handler(exc, name):
        raise RuntimeError("handler broke")

    with StateSink.open(agent, worker_id="w", on_error=handler) as sink:
        with caplog.at_level(logging.WARNING, logger="git_gasp.sink"):
            assert sink.on_tool_called("ls") is None
    assert sink.errors == 1
    assert any("handler broke" in r.getMessage() for r in caplog.records)


def test_a_write_the_log_refuses_is_counted(agent, monkeypatch):
    with StateSink.open(agent, worker_id="w") as sink:
        sink.on_run_started("task")

        def refuse(*a, **k):
            raise OSError("disk full")

        with monkeypatch.context() as mp:
            mp.setattr(sink.state.store, "append", refuse)
            assert sink.on_tool_called("ls") is None
            assert isinstance(sink.last_error, OSError)
        assert sink.on_tool_called("ls") is not None  # the next callback works again
    assert sink.errors == 1
    assert_conformant(agent)


def test_a_callback_never_swallows_keyboard_interrupt(agent, monkeypatch):
    sink = StateSink.open(agent, worker_id="w")
    sink.on_run_started("task")

    def interrupt(*a, **k):
        raise KeyboardInterrupt

    with monkeypatch.context() as mp, pytest.raises(KeyboardInterrupt):
        mp.setattr(sink.state, "record_tool_call", interrupt)
        sink.on_tool_called("ls")
    sink.close()
    assert sink.errors == 0


# --- the context manager ----------------------------------------------------------------


def _lease(agent):
    return agent / ".agent" / "lease"


def test_exit_on_an_exception_fails_the_run_releases_the_lease_and_reraises(agent):
    with pytest.raises(ValueError, match="boom"):
        with StateSink.open(agent, worker_id="w") as sink:
            run = sink.on_run_started("task")
            sink.on_tool_called("ls")
            assert _lease(agent).exists()
            raise ValueError("boom\nsecond line")
    assert not _lease(agent).exists()
    props = _folded(agent).nodes[run]["props"]
    assert props["outcome"] == "failed"
    assert props["error"] == "ValueError: boom second line"
    assert sink.closed and sink.errors == 0
    assert_conformant(agent)


def test_exit_finishes_an_open_run_as_succeeded(agent):
    with StateSink.open(agent, worker_id="w") as sink:
        run = sink.on_run_started("task")
    assert not _lease(agent).exists()
    assert _folded(agent).nodes[run]["props"]["outcome"] == "succeeded"


def test_exit_after_the_run_finished_writes_nothing_more(agent):
    with StateSink.open(agent, worker_id="w") as sink:
        sink.on_run_started("task")
        sink.on_run_finished("done")
        size = (agent / "state/events.jsonl").stat().st_size
    assert (agent / "state/events.jsonl").stat().st_size == size
    assert not _lease(agent).exists()


def test_exit_on_keyboard_interrupt_fails_the_run(agent):
    with pytest.raises(KeyboardInterrupt):
        with StateSink.open(agent, worker_id="w") as sink:
            run = sink.on_run_started("task")
            raise KeyboardInterrupt
    props = _folded(agent).nodes[run]["props"]
    assert props["outcome"] == "failed" and props["error"] == "KeyboardInterrupt"
    assert not _lease(agent).exists()


def test_a_sink_over_your_state_leaves_it_open_unless_it_owns_it(agent):
    state = AgentState.open(agent, "w")
    with StateSink(state) as sink:
        run = sink.on_run_started("task")
    assert state.graph.nodes[run]["props"]["outcome"] == "succeeded"
    assert _lease(agent).exists()  # still yours: the lease is held
    state.record_goal("the state is still usable")
    state.close()
    assert not _lease(agent).exists()
    state = AgentState.open(agent, "w")
    with StateSink(state, owns_state=True) as sink:
        sink.on_run_started("task")
    assert not _lease(agent).exists()


def test_a_state_you_closed_is_left_without_the_lease(agent):
    state = AgentState.open(agent, "w")
    sink = StateSink(state)
    with sink:
        run = sink.on_run_started("task")
        state.close()  # released by its owner while a run is open
    assert _folded(agent).nodes[run]["props"]["outcome"] == "succeeded"
    assert not _lease(agent).exists()  # the final write took it, and gave it back


def test_nested_and_double_exit(agent):
    sink = StateSink.open(agent, worker_id="w")
    with sink:
        run = sink.on_run_started("task")
        with sink:  # a nested with: only the outermost exit closes
            pass
        assert not sink.closed and sink.state.run is not None
        assert sink.on_tool_called("ls") is not None
    assert sink.closed
    sink.__exit__(None, None, None)  # a second exit: nothing
    sink.close()
    assert sink.on_tool_called("ls") is None  # callbacks after close are counted
    assert isinstance(sink.last_error, StateError) and sink.errors == 1
    with pytest.raises(StateError):
        sink.__enter__()
    assert _folded(agent).nodes[run]["props"]["outcome"] == "succeeded"
    assert not _lease(agent).exists()


def test_a_lease_held_by_another_worker_is_counted_and_exit_is_clean(agent):
    other = AgentState.open(agent, "other")
    other.record_goal("holds the lease")
    with StateSink.open(agent, worker_id="w") as sink:
        assert sink.on_run_started("task") is None
        assert "lease held by other" in str(sink.last_error)
    assert _lease(agent).exists()  # the other worker's lease is not touched
    other.close()


def test_open_refuses_a_directory_that_is_no_agent(tmp_path):
    with pytest.raises(GaspError):
        StateSink.open(tmp_path)


# --- threads --------------------------------------------------------------------------------


@pytest.mark.slow  # over half a second: out of the fast loop
def test_eight_threads_emit_tool_calls_concurrently(agent):
    per_thread = 12

    def work(n: int) -> list[str | None]:
        ids = []
        for i in range(per_thread):
            t = sink.on_tool_called(f"tool-{n}", input_summary=f"call {i}")
            ids.append(sink.on_tool_finished(t, output_summary=f"ok {n}.{i}"))
            if i % 4 == 0:
                m = sink.on_model_called("m")
                sink.on_model_finished(m, usage={"input_tokens": i})
        return ids

    with StateSink.open(agent, worker_id="w") as sink:
        run = sink.on_run_started("parallel tools")
        with ThreadPoolExecutor(max_workers=8) as pool:
            results = list(pool.map(work, range(8)))
    assert sink.errors == 0, sink.last_error
    ids = [i for r in results for i in r]
    assert None not in ids and len(set(ids)) == 8 * per_thread
    g = _folded(agent)
    for tid in ids:
        props = g.nodes[tid]["props"]
        assert props["status"] == "succeeded" and type(props["duration_ms"]) is int
        assert g.has_relation(tid, "produced_by", run)
    events = _events(agent)
    called = [e for e in events if e.kind == "tool.called"]
    finished = [e for e in events if e.kind == "tool.finished"]
    assert len(called) == len(finished) == 8 * per_thread
    assert all(e.correlation_id == run for e in called + finished)
    assert_conformant(agent)


# --- git gasp check on a committed run ----------------------------------------------------


def test_a_committed_run_written_through_the_sink_passes_all_checks(agent):
    with StateSink.open(agent, worker_id="w") as sink:
        goal = sink.on_run_started("fix it", goal="Fix the bug")
        t = sink.on_tool_called("pytest")
        sink.on_tool_finished(t, error="1 failed")
        p = sink.on_patch("the fix", commit="abc1234")
        sink.on_eval("pytest", "Passed", patch=p)
        sink.on_decision("Approved", "green", patch=p)
        run = sink.state.run.run_id
        goal = sink.state.run.goal_id
        sink.on_run_finished("promoted")
    commit_run(agent, run, goal, "promoted")
    assert "Outcome: promoted" in git(agent, "log", "-1", "--format=%B")
    proc = gasp(agent, "check", "--json")
    assert proc.returncode == 0, out(proc)
    report = json.loads(proc.stdout)
    assert report["conformant"] is True
    assert [c["number"] for c in report["checks"] if c["passed"]] == [1, 2, 3, 4, 5, 6, 7]


def test_values_are_coerced_to_what_the_log_holds(agent, monkeypatch):
    class Score:
        def __float__(self) -> float:
            return 0.75

    monkeypatch.setattr("git_gasp.runtime.sink._MAX_PENDING", 2)
    with StateSink.open(agent, worker_id="w") as sink:
        run = sink.on_run_started("task")
        e = sink.on_eval("pytest", "Passed", score=Score())
        calls = [sink.on_tool_called("t") for _ in range(3)]  # the oldest start is dropped
        assert len(sink._started) == 2
        for c in calls:
            sink.on_tool_finished(c, error="")  # an empty error still means failed
        m = sink.on_model_called(42, provider=7)
        sink.on_model_finished(m)
        sink.on_run_finished(error=TimeoutError("too slow"))
    assert sink.errors == 0, sink.last_error
    g = _folded(agent)
    assert g.nodes[e]["props"]["score"] == 0.75
    assert all(g.nodes[c]["props"]["error"] == "error" for c in calls)
    assert all(type(g.nodes[c]["props"]["duration_ms"]) is int for c in calls)  # from props
    assert g.nodes[m]["props"]["model"] == "42" and g.nodes[m]["props"]["provider"] == "7"
    assert g.nodes[run]["props"]["error"] == "TimeoutError: too slow"
    assert g.nodes[run]["props"]["outcome"] == "failed"
    assert_conformant(agent)


def test_a_call_finished_after_its_run_stays_in_that_run(agent):
    with StateSink.open(agent, worker_id="w") as sink:
        first = sink.on_run_started("first")
        late = sink.on_tool_called("slow tool")
        sink.on_run_finished()
        assert sink.on_tool_finished(late, output_summary="done at last") == late  # no run
        second = sink.on_run_started("second")
        t = sink.on_tool_called("t")
        sink.on_run_finished()
        sink.on_run_started("third")
        assert sink.on_tool_finished(t) == t  # another run is open
    assert sink.errors == 0, sink.last_error
    events = _events(agent)
    called = {e.payload["id"]: e for e in events if e.kind == "tool.called"}
    for e in (e for e in events if e.kind == "tool.finished"):
        run = first if e.payload["id"] == late else second
        assert e.correlation_id == run and e.payload["run_id"] == run
        assert e.causation_id == called[e.payload["id"]].id
    assert_conformant(agent)


CALLBACKS = ("on_run_started", "on_run_finished", "on_model_called", "on_model_finished",
             "on_tool_called", "on_tool_finished", "on_eval", "on_patch", "on_decision")


def test_state_sink_has_the_protocols_exact_signatures():
    import inspect

    for name in CALLBACKS:
        want = inspect.signature(getattr(AgentSink, name))
        got = inspect.signature(getattr(StateSink, name))
        assert [(p.name, p.kind, p.default) for p in got.parameters.values()] == \
            [(p.name, p.kind, p.default) for p in want.parameters.values()], name
    params = inspect.signature(AgentSink.on_model_finished).parameters
    assert list(params) == ["self", "call_id", "output_summary", "error", "usage", "metadata"]
    assert inspect.signature(AgentSink.on_run_finished).parameters["outcome"].default \
        == "succeeded"
