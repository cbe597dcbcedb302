"""The LangChain bridge: GaspCallbackHandler over a real StateSink and agent repo, driven
by langchain-core's own fake chat models (offline: a connect attempt fails the test)."""

from __future__ import annotations

import asyncio
import re
import threading
from pathlib import Path

import pytest

pytest.importorskip("langchain_core")  # a guard only: the test extra installs it

from langchain_core.language_models.fake import FakeListLLM  # noqa: E402
from langchain_core.language_models.fake_chat_models import (  # noqa: E402
    FakeListChatModel,
    GenericFakeChatModel,
)
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402
from langchain_core.output_parsers import StrOutputParser  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402
from langchain_core.prompts import ChatPromptTemplate  # noqa: E402
from langchain_core.runnables import RunnableLambda, chain  # noqa: E402
from langchain_core.tools import ToolException, tool  # noqa: E402

from git_gasp.bridges.langchain import GaspCallbackHandler  # noqa: E402
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
    """No test here may reach the network: every internet connect attempt is refused
    and recorded, and the test fails if there was one."""
    monkeypatch.delenv("LANGCHAIN_TRACING_V2", raising=False)
    monkeypatch.delenv("LANGSMITH_TRACING", raising=False)
    with no_network(monkeypatch, "bridge tests") as attempts:
        yield attempts


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def boom(x: str) -> str:
    """Always fails."""
    raise RuntimeError(f"kaboom {x}")


@tool
def picky(x: str) -> str:
    """Fails in a way the tool itself handles."""
    raise ToolException(f"bad input {x}")


picky.handle_tool_error = True  # the error becomes a ToolMessage with status "error"


TOOLS = {"add": add, "boom": boom, "picky": picky}
USAGE = {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7}


def _model(*replies: AIMessage | str) -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter(replies))


def _call(name: str, args: dict, cid: str, **kw) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": cid}], **kw)


def _loop(model):
    """A hand-written tool-calling agent: model, tools, model, … until it answers."""
    @chain
    def agent(question: str) -> str:
        messages = [HumanMessage(question)]
        while True:
            reply = model.invoke(messages)
            messages.append(reply)
            if not reply.tool_calls:
                return reply.content
            for call in reply.tool_calls:
                try:
                    messages.append(TOOLS[call["name"]].invoke(call))
                except Exception as exc:  # the agent goes on after a failed tool
                    messages.append(ToolMessage(str(exc), tool_call_id=call["id"],
                                                status="error"))
    return agent


def _graph(repo: Path):
    parsed = parse_log((repo / "state/events.jsonl").read_bytes())
    assert not parsed.errors
    return fold(parsed.events).graph


def _nodes(graph, kind: str) -> list[dict]:
    return [n for n in graph.iter_nodes() if n["kind"] == kind]


def _tool_loop_agent():
    return _loop(_model(
        _call("add", {"a": 1, "b": 2}, "c1", usage_metadata=USAGE),
        _call("boom", {"x": "y"}, "c2"),
        AIMessage("the answer is 3"),
    ))


def _assert_tool_loop_graph(agent: Path) -> None:
    g = _graph(agent)
    (run,) = _nodes(g, "run")
    props = run["props"]
    assert props["status"] == "finished" and props["outcome"] == "succeeded"
    assert props["task"] == "agent: what is 1+2"
    assert props["metadata"]["chain"] == "agent"
    models = _nodes(g, "model_call")
    assert [m["props"]["status"] for m in models] == ["succeeded"] * 3
    assert {m["props"]["model"] for m in models} == {"generic-fake-chat-model"}
    assert models[0]["props"]["usage"] == USAGE
    assert models[0]["props"]["output_summary"] == "tool calls: add"
    assert models[0]["props"]["input_summary"] == "human: what is 1+2"
    assert models[2]["props"]["output_summary"] == "the answer is 3"
    tools = {t["props"]["tool"]: t["props"] for t in _nodes(g, "tool_call")}
    assert tools["add"]["status"] == "succeeded" and tools["add"]["output_summary"] == "3"
    assert tools["add"]["input_summary"] == '{"a": 1, "b": 2}'
    assert tools["boom"]["status"] == "failed" and tools["boom"]["success"] is False
    assert tools["boom"]["error"] == "RuntimeError: kaboom y"
    for node in models + _nodes(g, "tool_call"):
        assert g.has_relation(node["id"], "produced_by", run["id"])
        assert type(node["props"]["duration_ms"]) is int


def test_a_tool_calling_agent_records_one_conformant_run(agent):
    with StateSink.open(agent, worker_id="w") as sink:
        handler = GaspCallbackHandler(sink)
        answer = _tool_loop_agent().invoke("what is 1+2", config={"callbacks": [handler]})
    assert answer == "the answer is 3"
    assert sink.errors == 0 and handler.errors == 0, sink.last_error
    _assert_tool_loop_graph(agent)
    assert_conformant(agent)


def test_async_invocation_records_the_same_graph(agent):
    with StateSink.open(agent, worker_id="w") as sink:
        handler = GaspCallbackHandler(sink)
        answer = asyncio.run(_tool_loop_agent().ainvoke("what is 1+2",
                                                        config={"callbacks": [handler]}))
    assert answer == "the answer is 3"
    assert sink.errors == 0 and handler.errors == 0, sink.last_error
    _assert_tool_loop_graph(agent)


def test_nested_chains_are_not_runs(agent):
    pipeline = (ChatPromptTemplate.from_messages([("human", "{q}")])
                | FakeListChatModel(responses=["hi there"]) | StrOutputParser())
    with StateSink.open(agent, worker_id="w") as sink:
        out = pipeline.invoke({"q": "hello"}, config={"callbacks": [GaspCallbackHandler(sink)]})
    assert out == "hi there" and sink.errors == 0
    g = _graph(agent)
    (run,) = _nodes(g, "run")
    assert run["props"]["task"] == "RunnableSequence: hello"
    assert run["props"]["metadata"]["output"] == "hi there"
    (model,) = _nodes(g, "model_call")
    assert model["props"]["model"] == "fake-list-chat-model"
    assert model["props"]["provider"] == "fakelistchatmodel"
    assert model["props"]["output_summary"] == "hi there"


def test_text_completion_llms_and_usage_in_llm_output(agent):
    """on_llm_start (a non-chat LLM) and OpenAI-style token_usage in llm_output."""
    class Counted(GenericFakeChatModel):
        def _generate(self, messages, stop=None, run_manager=None, **kwargs):
            return ChatResult(generations=[ChatGeneration(message=AIMessage("ok"))],
                              llm_output={"token_usage": {"prompt_tokens": 3,
                                                          "completion_tokens": 1,
                                                          "total_tokens": 4}})

    pipeline = FakeListLLM(responses=["draft"]) | Counted(messages=iter([]))
    with StateSink.open(agent, worker_id="w") as sink:
        pipeline.invoke("write", config={"callbacks": [GaspCallbackHandler(sink)]})
    llm, chat = _nodes(_graph(agent), "model_call")
    assert llm["props"]["model"] == "fake-list" and llm["props"]["input_summary"] == "write"
    assert llm["props"]["output_summary"] == "draft"
    assert chat["props"]["usage"] == {"input_tokens": 3, "output_tokens": 1, "total_tokens": 4}
    assert sink.errors == 0


def test_a_graph_state_reads_as_its_last_message(agent):
    @chain
    def graph(state: dict) -> dict:
        return {"messages": [*state["messages"], AIMessage("yo")], "step": 2}

    with StateSink.open(agent, worker_id="w") as sink:
        graph.invoke({"messages": [HumanMessage("hi")]},
                     config={"callbacks": [GaspCallbackHandler(sink)]})
    (run,) = _nodes(_graph(agent), "run")
    assert run["props"]["task"] == "graph: hi"
    assert run["props"]["metadata"]["output"] == "yo"


def test_a_failing_chain_fails_its_run_and_the_error_reaches_the_caller(agent):
    def explode(_):
        raise ValueError("no answer")

    pipeline = FakeListChatModel(responses=["x"]) | RunnableLambda(explode)
    with StateSink.open(agent, worker_id="w") as sink:
        with pytest.raises(ValueError, match="no answer"):
            pipeline.invoke("q", config={"callbacks": [GaspCallbackHandler(sink)]})
    (run,) = _nodes(_graph(agent), "run")
    assert run["props"]["outcome"] == "failed"
    assert run["props"]["error"] == "ValueError: no answer"
    assert_conformant(agent)


def test_a_langgraph_interrupt_is_an_interrupted_run_not_a_failed_one(agent):
    class GraphInterrupt(Exception):  # langgraph.errors.GraphInterrupt, matched by name
        pass

    class NodeInterrupt(GraphInterrupt):
        pass

    def ask(_):
        raise NodeInterrupt("approve?")

    @chain
    def graph(state: dict) -> dict:  # a graph's loop: a node interrupts, the graph returns
        try:
            RunnableLambda(ask).invoke(state)
        except GraphInterrupt:
            return {**state, "__interrupt__": ["approve?"]}
        return state

    with StateSink.open(agent, worker_id="w") as sink:
        graph.invoke({"x": "start"}, config={"callbacks": [GaspCallbackHandler(sink)]})
    (run,) = _nodes(_graph(agent), "run")
    assert run["props"]["outcome"] == "interrupted" and "error" not in run["props"]


def test_a_model_error_is_a_failed_model_call(agent):
    class Down(GenericFakeChatModel):
        def _generate(self, *args, **kwargs):
            raise ConnectionError("model down")

    with StateSink.open(agent, worker_id="w") as sink:
        with pytest.raises(ConnectionError):
            _loop(Down(messages=iter([]))).invoke("q", config={"callbacks": [
                GaspCallbackHandler(sink)]})
    g = _graph(agent)
    (model,) = _nodes(g, "model_call")
    assert model["props"]["status"] == "failed"
    assert model["props"]["error"] == "ConnectionError: model down"
    assert _nodes(g, "run")[0]["props"]["outcome"] == "failed"


def test_a_tool_error_the_tool_handles_is_still_a_failed_call(agent):
    model = _model(_call("picky", {"x": "z"}, "c1"), AIMessage("gave up"))
    with StateSink.open(agent, worker_id="w") as sink:
        _loop(model).invoke("q", config={"callbacks": [GaspCallbackHandler(sink)]})
    g = _graph(agent)
    (call,) = _nodes(g, "tool_call")
    assert call["props"]["status"] == "failed" and call["props"]["error"] == "bad input z"
    assert _nodes(g, "run")[0]["props"]["outcome"] == "succeeded"  # the agent carried on


def test_a_model_called_outside_any_chain_is_a_run_of_its_own(agent):
    with StateSink.open(agent, worker_id="w") as sink:
        handler = GaspCallbackHandler(sink, task="one question", goal="Answer questions")
        FakeListChatModel(responses=["a"]).invoke("q1", config={"callbacks": [handler]})
        add.invoke({"a": 2, "b": 2}, config={"callbacks": [handler]})
    g = _graph(agent)
    runs = _nodes(g, "run")
    assert [r["props"]["task"] for r in runs] == ["one question", "one question"]
    assert all(r["props"]["outcome"] == "succeeded" for r in runs)
    (goal,) = _nodes(g, "goal")
    assert goal["props"]["title"] == "Answer questions"
    assert {r["props"]["goal_id"] for r in runs} == {goal["id"]}
    assert [n["kind"] for n in g.iter_nodes() if n["kind"].endswith("_call")] == [
        "model_call", "tool_call"]


def test_concurrent_roots_share_one_run_and_calls_pair_by_run_id(agent):
    together = threading.Barrier(4, timeout=30)  # all four roots run at once

    def step(n: int) -> int:
        together.wait()
        return add.invoke({"a": n, "b": 100})

    with StateSink.open(agent, worker_id="w") as sink:
        out = RunnableLambda(step).batch(list(range(4)), config={
            "callbacks": [GaspCallbackHandler(sink)], "max_concurrency": 4})
    assert out == [n + 100 for n in range(4)] and sink.errors == 0
    g = _graph(agent)
    (run,) = _nodes(g, "run")
    assert run["props"]["outcome"] == "succeeded"
    calls = _nodes(g, "tool_call")
    assert len(calls) == 4
    for call in calls:  # each finish landed on its own call
        a = int(re.search(r'"a": (\d+)', call["props"]["input_summary"]).group(1))
        assert call["props"]["output_summary"] == str(a + 100)
        assert call["props"]["status"] == "succeeded"


def test_a_run_the_caller_opened_takes_the_calls_and_stays_open(agent):
    with StateSink.open(agent, worker_id="w") as sink:
        mine = sink.on_run_started("my own loop")
        _tool_loop_agent().invoke("what is 1+2", config={"callbacks": [
            GaspCallbackHandler(sink)]})
        assert sink.state.run is not None and sink.state.run.run_id == mine
        sink.on_run_finished("promoted")
    g = _graph(agent)
    (run,) = _nodes(g, "run")
    assert run["id"] == mine and run["props"]["outcome"] == "promoted"
    assert len(_nodes(g, "model_call")) == 3 and sink.errors == 0


def test_secrets_in_prompts_and_outputs_are_redacted(agent):
    key = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" * 2
    with StateSink.open(agent, worker_id="w") as sink:
        FakeListChatModel(responses=[f"the key is {key}"]).invoke(
            f"use {key}", config={"callbacks": [GaspCallbackHandler(sink)],
                                  "metadata": {"note": f"key {key}", "ticket": "T-7"}})
    log = (agent / "state/events.jsonl").read_text()
    assert key not in log and "[REDACTED:openai_key:" in log
    (model,) = _nodes(_graph(agent), "model_call")
    assert model["props"]["metadata"]["ticket"] == "T-7"  # the caller's metadata is kept


def test_any_agent_sink_will_do_and_a_broken_one_never_breaks_the_agent():
    sink = RecordingSink()
    assert isinstance(sink, AgentSink)
    _tool_loop_agent().invoke("what is 1+2", config={"callbacks": [GaspCallbackHandler(sink)]})
    pair = ["on_model_called", "on_model_finished", "on_tool_called", "on_tool_finished"]
    assert sink.names() == ["on_run_started", *pair, *pair, "on_model_called",
                            "on_model_finished", "on_run_finished"]
    # each finish names the id its start got back (ids count the callbacks from 1)
    starts = [i + 1 for i, (name, _, _) in enumerate(sink.calls) if name.endswith("_called")]
    finishes = [first for name, first, _ in sink.calls if name.endswith("_finished")
                and name != "on_run_finished"]
    assert [int(f.split("_")[1]) for f in finishes] == starts
    broken = RecordingSink(fail=("on_tool_called", "on_run_finished"))
    handler = GaspCallbackHandler(broken)
    answer = _tool_loop_agent().invoke("what is 1+2", config={"callbacks": [handler]})
    assert answer == "the answer is 3" and handler.errors == 3
    assert "on_tool_finished" not in broken.names()  # no call to finish: its start failed


def test_readme_example_records_a_run_with_its_three_lines(agent, tmp_path, monkeypatch):
    (block,) = marked_blocks()  # README's LangChain example, marked with this test's name
    code = block.text
    assert len(code.strip().splitlines()) <= 10
    added = [ln for ln in code.splitlines() if "gasp" in ln.lower() or "sink" in ln]
    assert len(added) == 3, added  # the import, the sink, the callbacks
    monkeypatch.chdir(agent.parent)
    agent.rename(agent.parent / "my-agent")
    exec(compile(code, "README.md", "exec"), {"agent": _tool_loop_agent()})
    repo = agent.parent / "my-agent"
    (run,) = _nodes(_graph(repo), "run")
    assert run["props"]["outcome"] == "succeeded"
    assert_conformant(repo)
