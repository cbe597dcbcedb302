"""The OpenAI Agents SDK bridge: GaspTracingProcessor over a real StateSink and agent repo,
agents run by `Runner.run_sync` on a fake `Model` (offline: our processor is the only
one, OPENAI_API_KEY is a dummy, and a connect attempt fails the test)."""

from __future__ import annotations

import asyncio
import re
import warnings
from pathlib import Path

import pytest

pytest.importorskip("agents")  # a guard only: the test extra installs openai-agents

import agents  # noqa: E402
from agents import (  # noqa: E402
    Agent,
    GuardrailFunctionOutput,
    InputGuardrailTripwireTriggered,
    Runner,
    function_tool,
    input_guardrail,
    set_trace_processors,
)
from agents.items import ModelResponse  # noqa: E402
from agents.models.interface import Model  # noqa: E402
from agents.tracing import (  # noqa: E402
    SpanError,
    agent_span,
    function_span,
    generation_span,
    response_span,
)
from agents.tracing.traces import TraceState, reattach_trace  # noqa: E402
from agents.usage import Usage, model_usage_to_span_usage  # noqa: E402
from openai.types.responses import (  # noqa: E402
    Response,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from git_gasp.bridges.openai_agents import GaspTracingProcessor  # noqa: E402
from git_gasp.protocol.envelope import parse_log  # noqa: E402
from git_gasp.protocol.fold import fold  # noqa: E402
from git_gasp.runtime.sink import AgentSink, StateSink  # noqa: E402
from tests.bridges.fake_sink import RecordingSink  # noqa: E402
from tests.runtime.helpers import assert_conformant  # noqa: E402
from tests.testing.offline import no_network
from tests.testing.readme import marked_blocks  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    """No network: a dummy key, no processor but the test's, and every internet connect
    attempt refused and recorded (the test fails if there was one)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")
    monkeypatch.delenv("OPENAI_AGENTS_DISABLE_TRACING", raising=False)
    with no_network(monkeypatch, "bridge tests") as attempts:
        set_trace_processors([])  # not the default exporter to api.openai.com
        yield attempts
        set_trace_processors([])
        _close_default_loop()


def _close_default_loop() -> None:
    """Runner.run_sync leaves this thread's default event loop open, its executor's
    thread (a sync tool ran there) alive: close both, so no later test runs in a process
    with a stray thread (conformance/forked forks only a single-threaded process)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        policy = asyncio.get_event_loop_policy()
        try:
            loop = policy.get_event_loop()
        except RuntimeError:
            return
    if not loop.is_closed():
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()
    policy.set_event_loop(None)


def _message(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(id="msg_1", type="message", role="assistant",
                                 status="completed", content=[ResponseOutputText(
                                     type="output_text", text=text, annotations=[])])


def _call(name: str, arguments: str, call_id: str) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(id=f"fc_{call_id}", call_id=call_id, type="function_call",
                                    name=name, arguments=arguments)


USAGE = Usage(requests=1, input_tokens=11, output_tokens=4, total_tokens=15)


class FakeModel(Model):
    """Canned responses, traced as the SDK's chat-completions model traces them: a
    generation span with the model, input, output and usage (errors set on the span)."""

    def __init__(self, *outputs, name: str = "fake-model", fail: str | None = None):
        self.outputs = list(outputs)
        self.name = name
        self.fail = fail

    async def get_response(self, system_instructions, input, model_settings, tools,
                           output_schema, handoffs, tracing, *, previous_response_id=None,
                           conversation_id=None, prompt=None):
        with generation_span(model=self.name, model_config={"base_url": "https://fake.test/v1"},
                             disabled=tracing.is_disabled()) as span:
            span.span_data.input = [{"role": "user", "content": input}] if isinstance(
                input, str) else list(input)
            if self.fail:
                span.set_error(SpanError(message="Error getting response",
                                         data={"error": self.fail}))
                raise ConnectionError(self.fail)
            output = self.outputs.pop(0)
            span.span_data.output = [{"output": [o.model_dump() for o in output]}]
            span.span_data.usage = model_usage_to_span_usage(USAGE)
            return ModelResponse(output=output, usage=USAGE, response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError


class FakeResponsesModel(FakeModel):
    """Traced as the SDK's Responses model traces: a response span, its Response set at
    the end."""

    async def get_response(self, system_instructions, input, model_settings, tools,
                           output_schema, handoffs, tracing, *, previous_response_id=None,
                           conversation_id=None, prompt=None):
        with response_span(disabled=tracing.is_disabled()) as span:
            output = self.outputs.pop(0)
            span.span_data.usage = model_usage_to_span_usage(USAGE)
            span.span_data.response = Response.model_construct(
                id="resp_1", model=self.name, object="response", output=output)
            span.span_data.input = input
            return ModelResponse(output=output, usage=USAGE, response_id="resp_1")


@function_tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@function_tool
def boom(x: str) -> str:
    """Always fails."""
    raise RuntimeError(f"kaboom {x}")


def _graph(repo: Path):
    parsed = parse_log((repo / "state/events.jsonl").read_bytes())
    assert not parsed.errors
    return fold(parsed.events).graph


def _nodes(graph, kind: str) -> list[dict]:
    return [n for n in graph.iter_nodes() if n["kind"] == kind]


def _calculator(model_cls=FakeModel) -> Agent:
    return Agent(name="calc", instructions="Use the tools.", tools=[add, boom],
                 model=model_cls([_call("add", '{"a":1,"b":2}', "c1")],
                                 [_call("boom", '{"x":"y"}', "c2")],
                                 [_message("the answer is 3")]))


def test_an_agent_run_records_one_conformant_run(agent):
    with StateSink.open(agent, worker_id="w") as sink:
        processor = GaspTracingProcessor(sink)
        set_trace_processors([processor])
        result = Runner.run_sync(_calculator(), "what is 1+2")
    assert result.final_output == "the answer is 3"
    assert sink.errors == 0 and processor.errors == 0, sink.last_error
    g = _graph(agent)
    (run,) = _nodes(g, "run")
    props = run["props"]
    assert props["status"] == "finished" and props["outcome"] == "succeeded"
    assert props["task"] == "Agent workflow"
    assert props["metadata"]["trace_id"].startswith("trace_")
    models = _nodes(g, "model_call")
    assert [m["props"]["status"] for m in models] == ["succeeded"] * 3
    assert {m["props"]["model"] for m in models} == {"fake-model"}
    assert {m["props"]["provider"] for m in models} == {"fake.test"}
    assert models[0]["props"]["usage"]["input_tokens"] == 11
    assert models[0]["props"]["usage"]["output_tokens"] == 4
    assert models[0]["props"]["output_summary"] == 'add({"a":1,"b":2})'
    assert models[2]["props"]["output_summary"] == "the answer is 3"
    tools = {t["props"]["tool"]: t["props"] for t in _nodes(g, "tool_call")}
    assert tools["add"]["status"] == "succeeded" and tools["add"]["output_summary"] == "3"
    assert tools["add"]["outcome_metadata"]["input"] == '{"a":1,"b":2}'
    assert tools["boom"]["status"] == "failed" and tools["boom"]["success"] is False
    assert tools["boom"]["error"].startswith("Error running tool")
    for node in models + _nodes(g, "tool_call"):
        assert g.has_relation(node["id"], "produced_by", run["id"])
        assert type(node["props"]["duration_ms"]) is int
    assert_conformant(agent)


def test_response_spans_are_model_calls_too(agent):
    with StateSink.open(agent, worker_id="w") as sink:
        set_trace_processors([GaspTracingProcessor(sink, task="add numbers")])
        Runner.run_sync(_calculator(FakeResponsesModel), "what is 1+2")
    g = _graph(agent)
    assert _nodes(g, "run")[0]["props"]["task"] == "add numbers"
    models = _nodes(g, "model_call")
    assert [m["props"]["model"] for m in models] == ["fake-model"] * 3
    assert [m["props"]["status"] for m in models] == ["succeeded"] * 3
    assert models[0]["props"]["input_summary"] == "user: what is 1+2"
    assert models[2]["props"]["output_summary"] == "the answer is 3"
    assert models[1]["props"]["usage"]["total_tokens"] == 15
    assert sink.errors == 0


def test_a_model_error_fails_the_model_call_and_the_run(agent):
    broken = Agent(name="calc", model=FakeModel(fail="model down"))
    with StateSink.open(agent, worker_id="w") as sink:
        set_trace_processors([GaspTracingProcessor(sink)])
        with pytest.raises(ConnectionError):
            Runner.run_sync(broken, "hi")
    g = _graph(agent)
    (model,) = _nodes(g, "model_call")
    assert model["props"]["status"] == "failed"
    assert model["props"]["error"] == "Error getting response: model down"
    (run,) = _nodes(g, "run")
    assert run["props"]["outcome"] == "failed"
    assert run["props"]["error"] == "Error in agent run: model down"
    assert_conformant(agent)


@input_guardrail
def polite(ctx, agent, user_input):
    return GuardrailFunctionOutput(output_info=None, tripwire_triggered="rude" in user_input)


def test_handoffs_are_tool_calls_and_guardrails_evals(agent):
    helper = Agent(name="helper", model=FakeModel([_message("helped")]))
    triage = Agent(name="triage", handoffs=[helper], input_guardrails=[polite],
                   model=FakeModel([_call("transfer_to_helper", "{}", "h1")]))
    with StateSink.open(agent, worker_id="w") as sink:
        set_trace_processors([GaspTracingProcessor(sink)])
        assert Runner.run_sync(triage, "please help").final_output == "helped"
        with pytest.raises(InputGuardrailTripwireTriggered):
            Runner.run_sync(triage, "rude words")
    assert sink.errors == 0
    g = _graph(agent)
    first, second = _nodes(g, "run")
    assert first["props"]["outcome"] == "succeeded"
    assert first["props"]["metadata"]["agents"] == ["triage", "helper"]
    assert second["props"]["outcome"] == "failed"
    handoffs = [t["props"] for t in _nodes(g, "tool_call") if t["props"]["tool"] == "handoff"]
    assert handoffs[0]["status"] == "succeeded"
    assert handoffs[0]["input_summary"] == "from triage"
    assert handoffs[0]["output_summary"] == "to helper"
    evals = [(e["props"]["command"], e["props"]["status"]) for e in _nodes(g, "eval")]
    assert evals == [("guardrail polite", "Passed"), ("guardrail polite", "Failed")]
    assert_conformant(agent)


def test_a_run_ends_failed_on_a_failed_last_model_call_not_on_a_retried_one(agent):
    """What fails a run when no agent span says so (the SDK before it marked them)."""
    def model_call(fail: bool) -> None:
        with generation_span(model="m") as span:
            if fail:
                span.set_error(SpanError(message="Error getting response", data={}))

    with StateSink.open(agent, worker_id="w") as sink:
        set_trace_processors([GaspTracingProcessor(sink)])
        with agents.trace("retried"):
            model_call(True)
            model_call(False)
        with agents.trace("gave up"):
            model_call(False)
            model_call(True)
    retried, gave_up = _nodes(_graph(agent), "run")
    assert retried["props"]["outcome"] == "succeeded"
    assert gave_up["props"]["outcome"] == "failed"
    assert gave_up["props"]["error"] == "Error getting response"


def test_a_trace_around_several_runs_is_one_run(agent):
    with StateSink.open(agent, worker_id="w") as sink:
        set_trace_processors([GaspTracingProcessor(sink)])
        with agents.trace("two questions", metadata={"ticket": "T-1"}):
            Runner.run_sync(Agent(name="a", model=FakeModel([_message("one")])), "q1")
            Runner.run_sync(Agent(name="b", model=FakeModel([_message("two")])), "q2")
    g = _graph(agent)
    (run,) = _nodes(g, "run")
    assert run["props"]["task"] == "two questions"
    assert run["props"]["metadata"]["trace_metadata"] == {"ticket": "T-1"}
    assert run["props"]["metadata"]["agents"] == ["a", "b"]
    assert [m["props"]["output_summary"] for m in _nodes(g, "model_call")] == ["one", "two"]


def test_concurrent_runs_share_one_run_and_calls_pair_by_span(agent):
    class Gated(FakeModel):  # the first call of each run waits until all five are in
        async def get_response(self, *args, **kwargs):
            if self.gate is not None:
                gate, self.gate = self.gate, None
                gate["waiting"] -= 1
                if gate["waiting"] == 0:
                    gate["all in"].set()
                await asyncio.wait_for(gate["all in"].wait(), 30)
            return await super().get_response(*args, **kwargs)

    def adder(n: int, gate: dict) -> Agent:
        model = Gated([_call("add", f'{{"a":{n},"b":100}}', f"c{n}")], [_message(f"done {n}")])
        model.gate = gate
        return Agent(name=f"adder{n}", tools=[add], model=model)

    async def main():
        gate = {"waiting": 5, "all in": asyncio.Event()}
        return await asyncio.gather(*(Runner.run(adder(n, gate), "go") for n in range(5)))

    with StateSink.open(agent, worker_id="w") as sink:
        set_trace_processors([GaspTracingProcessor(sink)])
        results = asyncio.run(main())
    assert [r.final_output for r in results] == [f"done {n}" for n in range(5)]
    assert sink.errors == 0
    g = _graph(agent)
    (run,) = _nodes(g, "run")
    assert run["props"]["outcome"] == "succeeded"
    calls = _nodes(g, "tool_call")
    assert len(calls) == 5
    for call in calls:
        a = int(re.search(r'"a":(\d+)', call["props"]["outcome_metadata"]["input"]).group(1))
        assert call["props"]["output_summary"] == str(a + 100)
    assert {m["props"]["status"] for m in _nodes(g, "model_call")} == {"succeeded"}
    assert_conformant(agent)


def test_a_resumed_trace_is_a_run_opened_by_its_agent_span(agent):
    """A trace reattached from saved state never tells processors it started: its first
    root span (the agent's) opens the run, and that span's end closes it."""
    with StateSink.open(agent, worker_id="w") as sink:
        set_trace_processors([GaspTracingProcessor(sink)])
        resumed = reattach_trace(TraceState(trace_id="trace_0123456789abcdef0123456789abcdef",
                                            workflow_name="resumed"))
        with resumed, agent_span(name="calc"):
            with function_span("add", input='{"a":1,"b":1}') as span:
                span.span_data.output = 2
    g = _graph(agent)
    (run,) = _nodes(g, "run")
    assert run["props"]["task"] == "calc" and run["props"]["outcome"] == "succeeded"
    (call,) = _nodes(g, "tool_call")
    assert call["props"]["tool"] == "add" and call["props"]["output_summary"] == "2"
    assert sink.errors == 0


def test_shutdown_abandons_what_is_still_open(agent):
    with StateSink.open(agent, worker_id="w") as sink:
        processor = GaspTracingProcessor(sink)
        set_trace_processors([processor])
        trace = agents.trace("interrupted")
        trace.start(mark_as_current=True)
        span = function_span("slow")
        span.start()
        processor.shutdown()
    g = _graph(agent)
    (run,) = _nodes(g, "run")
    assert run["props"]["outcome"] == "abandoned"
    (call,) = _nodes(g, "tool_call")
    assert call["props"]["status"] == "failed"
    assert sink.errors == 0
    span.finish()
    trace.finish(reset_current=True)  # later ends change nothing and raise nothing
    assert processor.errors == 0


def test_a_run_the_caller_opened_takes_the_calls_and_stays_open(agent):
    with StateSink.open(agent, worker_id="w") as sink:
        set_trace_processors([GaspTracingProcessor(sink)])
        mine = sink.on_run_started("my own loop")
        Runner.run_sync(_calculator(), "what is 1+2")
        assert sink.state.run is not None and sink.state.run.run_id == mine
    g = _graph(agent)
    (run,) = _nodes(g, "run")
    assert run["id"] == mine and len(_nodes(g, "model_call")) == 3
    assert sink.errors == 0


def test_any_agent_sink_will_do_and_a_broken_one_never_breaks_the_agent():
    sink = RecordingSink()
    assert isinstance(sink, AgentSink)
    set_trace_processors([GaspTracingProcessor(sink)])
    Runner.run_sync(_calculator(), "what is 1+2")
    pair = ["on_model_called", "on_model_finished", "on_tool_called", "on_tool_finished"]
    assert sink.names() == ["on_run_started", *pair, *pair, "on_model_called",
                            "on_model_finished", "on_run_finished"]
    # each finish names the id its start got back (ids count the callbacks from 1)
    starts = [i + 1 for i, (name, _, _) in enumerate(sink.calls) if name.endswith("_called")]
    finishes = [first for name, first, _ in sink.calls if name.endswith("_finished")
                and name != "on_run_finished"]
    assert [int(f.split("_")[1]) for f in finishes] == starts
    broken = RecordingSink(fail=("on_tool_called", "on_run_finished"))
    processor = GaspTracingProcessor(broken)
    set_trace_processors([processor])
    assert Runner.run_sync(_calculator(), "what is 1+2").final_output == "the answer is 3"
    assert processor.errors == 3


def test_readme_example_records_a_run_with_its_three_lines(agent, monkeypatch):
    (block,) = marked_blocks()  # README's OpenAI Agents SDK example, marked with this test
    code = block.text
    assert len(code.strip().splitlines()) <= 10
    added = [ln for ln in code.splitlines() if "gasp" in ln.lower() or "sink" in ln]
    assert len(added) == 3, added  # the import, the sink, the processor
    monkeypatch.chdir(agent.parent)
    repo = agent.rename(agent.parent / "my-agent")
    exec(compile(code, "README.md", "exec"), {"agent": _calculator()})
    (run,) = _nodes(_graph(repo), "run")
    assert run["props"]["outcome"] == "succeeded"
    assert_conformant(repo)
