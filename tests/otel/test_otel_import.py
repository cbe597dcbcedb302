"""`import otel`: spans of any instrumented agent (GenAI semantic conventions,
OpenInference as the OpenAI Agents SDK instrumentation writes it, OpenLLMetry) become
runs, model and tool calls; the file reader names the bad line.

data/otel-foreign.jsonl holds three hand-written traces, one per convention, shaped
like those instrumentations' output (attribute names as their conventions define);
data/otel-openai-agents-*.jsonl are real: what OpenInference's and OpenLLMetry's
instrumentations wrote for a real OpenAI Agents SDK run (data/otel-capture.py).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from git_gasp.base.errors import FormatError
from git_gasp.otel.importer import OtelWriter, group_runs, role
from git_gasp.otel.otlp import any_value, decode_attributes, read_spans
from git_gasp.runtime import AgentState
from git_gasp.store.agent import load_agent

FOREIGN = Path(__file__).parent / "data" / "otel-foreign.jsonl"
SEMCONV, OPENINFERENCE, OPENLLMETRY = (
    "4bf92f3577b34da6a3ce929d0e0e4736", "5bf92f3577b34da6a3ce929d0e0e4737",
    "6bf92f3577b34da6a3ce929d0e0e4738")


def _import(repo: Path, data: bytes, name: str = "t.jsonl") -> list:
    runs, _ = group_runs(read_spans(data, name))
    with AgentState.open(repo, "test") as state:
        writer = OtelWriter(state)
        return [writer.write(run) for run in runs]


def _graph(repo: Path):
    return load_agent(repo).folded.graph


def _calls(graph, run_id: str) -> list[dict]:
    return [n["props"] for n in graph.iter_nodes()
            if n["kind"] in ("model_call", "tool_call") and n["props"].get("run_id") == run_id]


def test_attribute_values_round_trip():
    values = {"s": "x", "i": 2**40, "b": True, "d": 0.5, "a": ["x", 1]}
    encoded = [{"key": k, "value": any_value(v)} for k, v in values.items()]
    assert encoded[1]["value"] == {"intValue": str(2**40)}  # int64 as a string, as OTLP/JSON
    assert decode_attributes(encoded) == values


def test_roles_and_runs_of_the_three_conventions():
    spans = read_spans(FOREIGN.read_bytes(), str(FOREIGN))
    assert [role(s) for s in spans if s.trace_id == OPENINFERENCE] == [
        None, "agent", "model", "tool", "model"]
    assert [role(s) for s in spans if s.trace_id == OPENLLMETRY] == [
        None, "model", "tool", None]
    runs, unused = group_runs(spans)
    assert [r.run_id for r in runs] == [
        f"run_otel.{SEMCONV}.00f067aa0ba902b7",  # the invoke_agent span
        f"run_otel.{OPENINFERENCE}.20f067aa0ba902b7",  # the AGENT span, below a CHAIN
        f"run_otel.{OPENLLMETRY}",  # no agent span: the trace is the run
    ]
    assert [[k for k, _ in r.calls] for r in runs] == [
        ["model", "tool", "model"], ["model", "tool", "model"], ["model", "tool"]]
    assert unused == 1  # the OpenAI Agents workflow span above the agent


def test_foreign_spans_become_runs_and_calls(agent):
    results = _import(agent, FOREIGN.read_bytes())
    assert [(r.outcome, r.model_calls, r.tool_calls, r.failed_calls) for r in results] == [
        ("completed", 2, 1, 1), ("completed", 2, 1, 0), ("completed", 1, 1, 1)]
    graph = _graph(agent)
    semconv, oi, tl = (r.run_id for r in results)
    run = graph.node(semconv)["props"]
    assert run["task"] == "Weather Agent" and run["outcome"] == "completed"
    assert run["metadata"]["source"]["trace_id"] == SEMCONV
    assert run["metadata"]["source"]["service"] == "weather-agent"
    chat, weather, chat2 = _calls(graph, semconv)
    assert (chat["model"], chat["provider"], chat["status"]) == ("gpt-4o", "openai", "succeeded")
    assert chat["usage"] == {"input_tokens": 97, "output_tokens": 52}
    assert chat["started_ts_ms"] == 1767225600010 and chat["finished_ts_ms"] == 1767225600400
    assert chat["duration_ms"] == 390
    assert weather["tool"] == "get_weather" and weather["status"] == "failed"
    assert weather["success"] is False and weather["error"] == "weather service timed out"
    assert weather["metadata"]["tool_call_id"] == "call_VSPygqKTWdrhaFErNvMV18Yl"
    assert chat2["usage"] == {"input_tokens": 160, "output_tokens": 31}
    llm, multiply, llm2 = _calls(graph, oi)
    assert (llm["model"], llm["provider"]) == ("gpt-4.1-mini", "openai")
    assert llm["usage"] == {"input_tokens": 210, "output_tokens": 18}
    assert llm["input_summary"] == "What is 6 times 7?"
    assert (multiply["tool"], multiply["output_summary"]) == ("multiply", "42")
    assert graph.node(oi)["props"]["task"] == "Assistant"
    chat, search = _calls(graph, tl)
    assert (chat["model"], chat["provider"]) == ("gpt-3.5-turbo", "openai")
    assert chat["usage"] == {"input_tokens": 15, "output_tokens": 20}
    assert search["tool"] == "search" and search["error"] == "search backend returned 503"
    assert graph.node(tl)["props"]["task"] == "joke_generator.workflow"


def test_importing_twice_adds_nothing(agent):
    _import(agent, FOREIGN.read_bytes())
    log = (agent / "state/events.jsonl").read_bytes()
    again = _import(agent, FOREIGN.read_bytes())
    assert all(r.already for r in again)
    assert (agent / "state/events.jsonl").read_bytes() == log


def test_error_status_on_the_agent_span_fails_the_run(agent):
    line = json.loads(FOREIGN.read_text().splitlines()[0])
    root = line["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    root["status"] = {"code": 2, "message": "agent crashed"}
    (result, ) = _import(agent, json.dumps(line).encode())
    props = _graph(agent).node(result.run_id)["props"]
    assert props["outcome"] == "failed" and props["metadata"]["error"] == "agent crashed"


def test_a_json_file_with_one_request_and_base64_ids(tmp_path):
    line = json.loads(FOREIGN.read_text().splitlines()[0])
    span = line["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    span["traceId"] = base64.b64encode(bytes.fromhex(span["traceId"])).decode()
    spans = read_spans(json.dumps(line, indent=2).encode(), "one.json")
    assert len(spans) == 4 and spans[0].trace_id == SEMCONV


@pytest.mark.parametrize(("text", "message"), [
    ('{"resourceSpans":[]}\n{"resourceSpans": [\n', r"t.jsonl:2: not JSON \("),
    ('\n[1]\n', "t.jsonl:2: not an ExportTraceServiceRequest"),
    ('{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"xyz","spanId":"00"}]}]}]}',
     "t.jsonl:1: traceId 'xyz' is not 32 hex digits"),
    ('{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"' + "a" * 32 + '","spanId":"'
     + "b" * 16 + '","startTimeUnixNano":"soon"}]}]}]}',
     "t.jsonl:1: startTimeUnixNano 'soon' is not an integer"),
])
def test_a_malformed_line_is_named(text, message):
    with pytest.raises(FormatError, match=message):
        read_spans(text.encode(), "t.jsonl")


def test_an_export_imports_with_its_goal_and_open_run(agent):
    from tests.otel.test_otel_export import GOLDEN, INPUT

    goal = b"".join(INPUT.read_bytes().splitlines(keepends=True)[:2])  # goal_0001 + ops
    (agent / "state/events.jsonl").write_bytes(goal)
    results = _import(agent, GOLDEN.read_bytes())
    assert [(r.run_id, r.outcome, r.failed_calls) for r in results] == [
        ("run_0001", "failed", 2), ("run_0002", "completed", 0), ("run_0003", "abandoned", 0)]
    graph = _graph(agent)
    assert graph.node("run_0001")["props"]["goal_id"] == "goal_0001"
    assert graph.has_relation("run_0001", "serves", "goal_0001")
    assert graph.node("run_0002")["props"].get("goal_id") is None
    (still,) = _calls(graph, "run_0003")
    assert still["status"] == "running"  # as it was when exported
    assert [c["status"] for c in _calls(graph, "run_0001")] == [
        "succeeded", "succeeded", "failed", "failed"]


def test_odd_content_never_leaves_a_run_open(agent):
    """A file holding its spans twice, a lone surrogate, a token count beyond 64 bits."""
    request = json.loads(FOREIGN.read_text().splitlines()[0])
    chat = request["resourceSpans"][0]["scopeSpans"][0]["spans"][1]
    usage = next(a for a in chat["attributes"] if a["key"] == "gen_ai.usage.input_tokens")
    usage["value"] = {"intValue": str(2**70)}
    odd = json.dumps(request).replace('"Weather Agent"', '"Weather \\ud800 Agent"')
    results = _import(agent, (odd + "\n" + odd + "\n").encode())
    assert [r.model_calls + r.tool_calls for r in results] == [3]
    graph = _graph(agent)
    run = graph.node(results[0].run_id)["props"]
    assert run["status"] == "finished" and run["task"] == "Weather ? Agent"
    chat = _calls(graph, results[0].run_id)[0]
    assert chat["usage"] == {"output_tokens": 52}


def test_a_failed_runs_message_survives_export(agent):
    from git_gasp.otel.exporter import export_otel

    line = json.loads(FOREIGN.read_text().splitlines()[0])
    line["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["status"] = {
        "code": 2, "message": "agent crashed"}
    _import(agent, json.dumps(line).encode())
    root = json.loads(export_otel(agent))["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert root["status"] == {"code": 2, "message": "agent crashed"}
    assert root["traceId"] == SEMCONV and root["spanId"] == "00f067aa0ba902b7"


@pytest.mark.parametrize(("name", "scope"), [
    ("otel-openai-agents-openinference.jsonl", "openinference.instrumentation.openai_agents"),
    ("otel-openai-agents-openllmetry.jsonl", "opentelemetry.instrumentation.openai_agents"),
])
def test_a_real_openai_agents_trace(agent, name, scope):
    """Spans the real instrumentations wrote for a real OpenAI Agents SDK run (see
    data/otel-capture.py): one run, two model calls, two tool calls, one of them failed."""
    (result,) = _import(agent, (FOREIGN.parent / name).read_bytes())
    assert (result.outcome, result.model_calls, result.tool_calls, result.failed_calls) == (
        "completed", 2, 2, 1)
    graph = _graph(agent)
    run = graph.node(result.run_id)["props"]
    assert run["task"] == "Assistant" and run["metadata"]["source"]["scope"] == scope
    calls = _calls(graph, result.run_id)
    assert [c.get("model") or c["tool"] for c in calls] == [
        "scripted-gpt", "multiply", "get_weather", "scripted-gpt"]
    multiply, weather = calls[1], calls[2]
    assert multiply["status"] == "succeeded" and multiply["output_summary"] == "42"
    assert weather["status"] == "failed" and "Error running tool" in weather["error"]
    if "openinference" in name:
        assert calls[0]["usage"] == {"input_tokens": 120, "output_tokens": 30}


def test_a_real_langchain_trace(agent):
    """OpenInference's LangChain instrumentation over a tool-calling loop of LangChain's
    fake chat model (data/otel-capture.py): its AGENT span is the run."""
    data = (FOREIGN.parent / "otel-langchain-openinference.jsonl").read_bytes()
    (result,) = _import(agent, data)
    assert (result.model_calls, result.tool_calls, result.failed_calls) == (2, 2, 1)
    graph = _graph(agent)
    assert graph.node(result.run_id)["props"]["task"] == "calculator_agent"
    chat, add, lookup, chat2 = _calls(graph, result.run_id)
    assert chat["model"] == "FakeMessagesListChatModel"  # no model name: the span's
    assert chat["provider"] == "fakemessageslistchatmodel"
    assert chat["usage"] == {"input_tokens": 40, "output_tokens": 9}
    assert (add["tool"], add["input_summary"], add["output_summary"]) == (
        "add", '{"a": 2, "b": 3}', "5")
    assert lookup["status"] == "failed" and "lookup backend unavailable" in lookup["error"]
    assert chat2["usage"] == {"input_tokens": 70, "output_tokens": 6}


_SPAN = ('{"traceId":"' + "a" * 32 + '","spanId":"' + "b" * 16 + '","name":"s",'
         '"startTimeUnixNano":"1","endTimeUnixNano":"2","attributes":[{"key":"n","value":'
         '{"intValue": Infinity}}]}')


@pytest.mark.parametrize(("name", "text", "message"), [
    ("t.jsonl", '{"resourceSpans":[{"scopeSpans":[{"spans":[' + _SPAN + ']}]}]}',
     "t.jsonl:1: cannot convert float infinity"),
    ("t.json", '{"resourceSpans":[{"scopeSpans":[{"spans":[' + _SPAN + ']}]}]}',
     "t.json: cannot convert float infinity"),
    ("t.json", '{"resourceSpans":[{"resource":[1]}]}', "t.json: resource is not an object"),
    ("t.jsonl", '{"resourceSpans":[{"scopeSpans":[{"scope":"x","spans":[]}]}]}',
     "t.jsonl:1: scope is not an object"),
])
def test_hostile_numbers_and_shapes_are_one_format_error(name, text, message):
    """An intValue of Infinity (OverflowError) and a resource that is a list
    (AttributeError) were internal errors of `git gasp import otel`."""
    with pytest.raises(FormatError, match=message):
        read_spans(text.encode(), name)


def test_import_otel_of_a_hostile_file_is_one_line_and_writes_nothing(agent, tmp_path):
    from tests.testing.run import gasp, out

    bad = tmp_path / "bad.json"
    bad.write_text('{"resourceSpans":[{"resource":[1]}]}')
    before = (agent / "state" / "events.jsonl").read_bytes()
    proc = gasp(agent, "import", "otel", str(bad))
    assert proc.returncode == 1 and out(proc).startswith("git gasp: error: "), out(proc)
    assert len(out(proc).strip().splitlines()) == 1
    assert (agent / "state" / "events.jsonl").read_bytes() == before
