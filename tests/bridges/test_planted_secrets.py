"""No secret a framework hands a bridge reaches the repo, whatever argument it is in
(#24, item 1).

Each bridge's callbacks are driven from a JSON description of one agent run (a chain
with a model call, a tool call, a failing tool; a trace with generation, response,
function, handoff and guardrail spans). Every string in it gets a GitHub token and an
AWS key planted (``tests/testing/planting.py`` walks the description, so a new argument
is covered without naming it; one that changes which callbacks fire gets a run of its
own), the run is recorded through a real StateSink and closed with `git gasp
commit-run`, and no planted secret may be anywhere in the repo.
"""

from __future__ import annotations

import uuid
from types import SimpleNamespace
from typing import Any

import pytest

from git_gasp.runtime.sink import StateSink
from tests.bridges.fake_sink import RecordingSink
from tests.testing.planting import copies, leaks, plant, secrets_for
from tests.testing.repos import copy_repo
from tests.testing.run import gasp, out

pytest.importorskip("langchain_core")
pytest.importorskip("agents")

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, LLMResult  # noqa: E402

from git_gasp.bridges.langchain import GaspCallbackHandler  # noqa: E402
from git_gasp.bridges.openai_agents import GaspTracingProcessor  # noqa: E402

pytestmark = pytest.mark.slow  # every bridge argument planted, through the CLI

# one LangChain run: {callback: keywords}; ints stand for LangChain's run UUIDs
LANGCHAIN = [
    {"on_chain_start": {"serialized": {"name": "agent", "id": ["langchain", "Agent"]},
                        "inputs": {"input": "what is 1+2"}, "run_id": 1,
                        "metadata": {"user": "dev", "ls_tracer": "x"}, "name": "agent"}},
    {"on_chat_model_start": {"serialized": {"name": "ChatFake", "id": ["lc", "ChatFake"]},
                             "messages": [[{"human": "what is 1+2"}]], "run_id": 2,
                             "parent_run_id": 1,
                             "metadata": {"ls_provider": "openai", "ls_model_name": "gpt-x"},
                             "invocation_params": {"model": "gpt-x", "_type": "fake"}}},
    {"on_llm_end": {"response": {"ai": "calling add", "tool_calls": [
        {"name": "add", "args": {"a": "1"}, "id": "call_1"}],
        "llm_output": {"token_usage": {"prompt_tokens": 5, "model_name": "gpt-x",
                                       "details": {"tier": "flex"}}}},
        "run_id": 2, "parent_run_id": 1}},
    {"on_tool_start": {"serialized": {"name": "add", "description": "adds"},
                       "input_str": "{'a': 1}", "inputs": {"a": "1"}, "run_id": 3,
                       "parent_run_id": 1, "tool_call_id": "call_1",
                       "metadata": {"thread": "t1"}}},
    {"on_tool_end": {"output": {"tool": "3", "tool_call_id": "call_1", "status": "error"},
                     "run_id": 3, "parent_run_id": 1}},
    {"on_llm_start": {"serialized": {"name": "FakeLLM"}, "prompts": ["say it"], "run_id": 4,
                      "parent_run_id": 1, "metadata": {"ls_provider": "local"}}},
    {"on_llm_error": {"error": "model overloaded", "run_id": 4, "parent_run_id": 1}},
    {"on_tool_start": {"serialized": {"name": "boom"}, "input_str": "x", "run_id": 5,
                       "parent_run_id": 1, "name": "boom_tool"}},
    {"on_tool_error": {"error": "kaboom", "run_id": 5, "parent_run_id": 1}},
    {"on_chain_end": {"outputs": {"output": "the answer is 3"}, "run_id": 1}},
]


def _lc_value(key: str, value: Any) -> Any:
    if key in ("run_id", "parent_run_id"):
        return uuid.UUID(int=value)
    if key == "messages":
        return [[HumanMessage(m["human"]) for m in batch] for batch in value]
    if key == "response":
        message = AIMessage(value["ai"], tool_calls=value["tool_calls"])
        return LLMResult(generations=[[ChatGeneration(message=message)]],
                         llm_output=value["llm_output"])
    if key == "output":
        return ToolMessage(value["tool"], tool_call_id=value["tool_call_id"],
                           status=value["status"])
    if key == "error":
        return RuntimeError(value)
    return value


def drive_langchain(sink: Any, rows: list) -> None:
    handler = GaspCallbackHandler(sink)
    for row in rows:
        ((name, kwargs),) = row.items()
        try:
            args = {k: _lc_value(k, v) for k, v in kwargs.items()}
        except ValueError:  # LangChain would not build it (a status no ToolMessage has)
            continue
        first = {"on_chain_start": ("serialized", "inputs"),
                 "on_chat_model_start": ("serialized", "messages"),
                 "on_llm_start": ("serialized", "prompts"),
                 "on_tool_start": ("serialized", "input_str"),
                 "on_chain_end": ("outputs",), "on_llm_end": ("response",),
                 "on_tool_end": ("output",), "on_llm_error": ("error",),
                 "on_tool_error": ("error",)}[name]
        positional = [args.pop(k) for k in first]
        getattr(handler, name)(*positional, **args)


# one OpenAI Agents SDK trace: {event: trace or span}; span_data as the SDK's fields
AGENTS = [
    {"trace_start": {"trace_id": "trace_0a1b", "name": "Calculator workflow",
                     "group_id": "thread-7", "metadata": {"user": "dev"}}},
    {"span_start": {"span_id": "span_1", "parent_id": None, "trace_id": "trace_0a1b",
                    "error": None, "span_data": {"type": "agent", "name": "Calculator"}}},
    {"span_start": {"span_id": "span_2", "parent_id": "span_1", "trace_id": "trace_0a1b",
                    "error": None, "span_data": {
                        "type": "generation", "model": "gpt-x",
                        "model_config": {"base_url": "https://api.example.com/v1"},
                        "input": [{"role": "user", "content": "what is 1+2"}],
                        "output": None, "usage": None}}},
    {"span_end": {"span_id": "span_2", "parent_id": "span_1", "trace_id": "trace_0a1b",
                  "error": None, "span_data": {
                      "type": "generation", "model": "gpt-x",
                      "model_config": {"base_url": "https://api.example.com/v1"},
                      "input": [{"role": "user", "content": "what is 1+2"}],
                      "output": [{"role": "assistant", "content": "add(1, 2)"}],
                      "usage": {"input_tokens": 5, "output_tokens": 2,
                                "details": {"tier": "flex"}}}}},
    {"span_end": {"span_id": "span_3", "parent_id": "span_1", "trace_id": "trace_0a1b",
                  "error": {"message": "rate limited", "data": {"error": "429"}},
                  "span_data": {"type": "response", "input": "and now?", "usage": None,
                                "response": {"model": "gpt-y", "id": "resp_9",
                                             "output": [{"type": "function_call",
                                                         "name": "add",
                                                         "arguments": "{\"a\": 1}"}]}}}},
    {"span_start": {"span_id": "span_4", "parent_id": "span_1", "trace_id": "trace_0a1b",
                    "error": None, "span_data": {"type": "function", "name": "add",
                                                 "input": "{\"a\": 1}", "output": None,
                                                 "mcp_data": {"server": "calc"}}}},
    {"span_end": {"span_id": "span_4", "parent_id": "span_1", "trace_id": "trace_0a1b",
                  "error": {"message": "tool failed", "data": {"error": "boom"}},
                  "span_data": {"type": "function", "name": "add", "input": "{\"a\": 1}",
                                "output": "nothing", "mcp_data": {"server": "calc"}}}},
    {"span_start": {"span_id": "span_5", "parent_id": "span_1", "trace_id": "trace_0a1b",
                    "error": None, "span_data": {"type": "handoff", "from_agent": "Calculator",
                                                 "to_agent": "Checker"}}},
    {"span_end": {"span_id": "span_5", "parent_id": "span_1", "trace_id": "trace_0a1b",
                  "error": None, "span_data": {"type": "handoff", "from_agent": "Calculator",
                                               "to_agent": "Checker"}}},
    {"span_end": {"span_id": "span_6", "parent_id": "span_1", "trace_id": "trace_0a1b",
                  "error": None, "span_data": {"type": "guardrail", "name": "no_swearing",
                                               "triggered": True}}},
    {"span_end": {"span_id": "span_1", "parent_id": None, "trace_id": "trace_0a1b",
                  "error": None, "span_data": {"type": "agent", "name": "Calculator"}}},
    {"trace_end": {"trace_id": "trace_0a1b", "name": "Calculator workflow",
                   "group_id": "thread-7", "metadata": {"user": "dev"}}},
]


def _ns(value: Any) -> Any:
    """The SDK's objects, as the attributes the processor reads (dicts stay dicts where
    the SDK hands over dicts: model_config, usage, error, mcp_data, metadata)."""
    if isinstance(value, dict) and "type" in value and value["type"] in (
            "agent", "generation", "response", "function", "handoff", "guardrail"):
        data = dict(value)
        if isinstance(data.get("response"), dict):
            data["response"] = SimpleNamespace(usage=None, **data["response"])
        return SimpleNamespace(**data)
    return value


def drive_agents(sink: Any, rows: list) -> None:
    processor = GaspTracingProcessor(sink)
    for row in rows:
        ((event, obj),) = row.items()
        target = SimpleNamespace(**{k: _ns(v) for k, v in obj.items()})
        getattr(processor, f"on_{event}")(target)


def _callbacks(drive) -> Any:
    def signature(rows: list) -> list:
        sink = RecordingSink()
        drive(sink, rows)
        return [(name, kw.get("status")) for name, _, kw in sink.calls]
    return signature


@pytest.mark.parametrize(("name", "rows", "drive"), [("langchain", LANGCHAIN, drive_langchain),
                                                     ("openai-agents", AGENTS, drive_agents)])
def test_a_secret_in_any_bridge_input_reaches_no_commit(name, rows, drive, agent_template,
                                                         tmp_path):
    groups = copies(rows, _callbacks(drive))
    assert sum(map(len, groups)) > 15  # the walk found the arguments
    for n, group in enumerate(groups):
        repo = copy_repo(agent_template, tmp_path / f"repo{n}")
        tag = f"{name}-{n}"
        with StateSink.open(repo, worker_id="w") as sink:
            drive(sink, plant(rows, group, tag))
        assert sink.errors == 0, sink.last_error
        proc = gasp(repo, "commit-run")
        assert proc.returncode == 0, out(proc)
        found = leaks(repo, {f: secrets_for(tag, f) for f in group})
        assert not found, "planted secrets reached the repo:\n" + "\n".join(found[:20])
