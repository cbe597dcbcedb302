"""The GenAI conventions as of semantic-conventions-genai v0.1.0 (#24, item 5): the
operations new since semantic-conventions 1.41.1 and the older names read on import,
``gen_ai.conversation.id`` for the session both ways, ``gen_ai.agent.id`` no longer on
the internal agent span, and ``OTEL_SEMCONV_STABILITY_OPT_IN`` under each setting.
"""

from __future__ import annotations

import json
import os

import pytest

from git_gasp.otel.importer import OtelWriter, group_runs, role
from git_gasp.otel.otlp import attributes, read_spans
from git_gasp.otel.semconv import MEMORY_OPS
from git_gasp.runtime import AgentState
from git_gasp.store.agent import load_agent
from tests.adapters.samples import CLAUDE_TRANSCRIPT
from tests.testing.run import gasp, out

TRACE = "7bf92f3577b34da6a3ce929d0e0e4739"
ROOT = "70f067aa0ba902b7"


def _span(sid: str, name: str, attrs: dict, parent: str | None = ROOT, start: int = 1) -> dict:
    span = {"traceId": TRACE, "spanId": sid, "name": name, "kind": 1,
            "startTimeUnixNano": str(1767225600000000000 + start),
            "endTimeUnixNano": str(1767225600000000000 + start + 1000),
            "attributes": attributes(attrs)}
    if parent:
        span["parentSpanId"] = parent
    return span


def _request(spans: list[dict]) -> bytes:
    return json.dumps({"resourceSpans": [{"resource": {"attributes": attributes(
        {"service.name": "planner"})}, "scopeSpans": [{"scope": {"name": "x"},
                                                        "spans": spans}]}]}).encode() + b"\n"


WORKFLOW = _request([
    _span(ROOT, "invoke_workflow triage", {"gen_ai.operation.name": "invoke_workflow",
                                           "gen_ai.workflow.name": "triage",
                                           "gen_ai.conversation.id": "conv_5j66UpCp"},
          parent=None, start=0),
    _span("71f067aa0ba902b7", "create_agent helper", {"gen_ai.operation.name": "create_agent",
                                                     "gen_ai.agent.name": "helper"}),
    _span("72f067aa0ba902b7", "plan", {"gen_ai.operation.name": "plan"}, start=2),
    _span("73f067aa0ba902b7", "chat old-model", {"gen_ai.operation.name": "chat",
                                                 "gen_ai.system": "openai",
                                                 "gen_ai.usage.prompt_tokens": 7,
                                                 "gen_ai.usage.completion_tokens": 3},
          parent="72f067aa0ba902b7", start=3),
    *[_span(f"8{n}f067aa0ba902b7", f"{op} notes", {"gen_ai.operation.name": op},
            start=4 + n) for n, op in enumerate(sorted(MEMORY_OPS))],
])


def _import(repo, data: bytes) -> list:
    runs, _ = group_runs(read_spans(data, "t.jsonl"))
    with AgentState.open(repo, "test") as state:
        writer = OtelWriter(state)
        return [writer.write(run) for run in runs]


def test_new_operations_and_older_names_are_read(agent):
    spans = read_spans(WORKFLOW, "t.jsonl")
    assert [role(s) for s in spans] == ["agent", None, None, "model"] + ["tool"] * 7
    (result,) = _import(agent, WORKFLOW)
    graph = load_agent(agent).folded.graph
    run = graph.node(result.run_id)["props"]
    assert run["task"] == "triage"  # gen_ai.workflow.name, replaced by gen_ai.agent.name
    assert run["metadata"]["source"]["conversation_id"] == "conv_5j66UpCp"
    calls = sorted((n["props"] for n in graph.iter_nodes()
                    if n["kind"] in ("model_call", "tool_call")),
                   key=lambda p: p["started_ts_ms"])
    model = calls[0]
    assert (model["model"], model["provider"]) == ("old-model", "openai")  # gen_ai.system
    assert model["usage"] == {"input_tokens": 7, "output_tokens": 3}
    assert sorted(c["tool"] for c in calls[1:]) == sorted(MEMORY_OPS)  # create_agent, plan: no call


def _export(repo, env: dict | None = None) -> bytes:
    full = {k: v for k, v in os.environ.items() if k != "OTEL_SEMCONV_STABILITY_OPT_IN"}
    full.update(env or {})
    import subprocess

    proc = subprocess.run(["git", "gasp", "export", "otel", "--all"], cwd=repo,
                          capture_output=True, env=full)
    assert proc.returncode == 0, out(proc)
    return proc.stdout


def _all_spans(data: bytes) -> list[dict]:
    from git_gasp.otel.otlp import decode_attributes

    return [dict(span, attrs=decode_attributes(span["attributes"]))
            for line in data.splitlines()
            for rs in json.loads(line)["resourceSpans"]
            for ss in rs["scopeSpans"] for span in ss["spans"]]


@pytest.mark.slow  # over half a second: out of the fast loop
def test_the_session_is_gen_ai_conversation_id_on_every_span(agent):
    proc = gasp(agent, "import", "claude-code", str(CLAUDE_TRANSCRIPT))
    assert proc.returncode == 0, out(proc)
    _import(agent, WORKFLOW)
    spans = _all_spans(_export(agent))
    by_conv: dict = {}
    for span in spans:
        by_conv.setdefault(span["attrs"].get("gen_ai.conversation.id"), []).append(span)
    assert set(by_conv) == {"6f48f32c-63b8-44c3-9f60-37aed18fbcf2", "conv_5j66UpCp"}
    assert len(by_conv["conv_5j66UpCp"]) == 1 + 8  # the run and its calls
    claude = by_conv["6f48f32c-63b8-44c3-9f60-37aed18fbcf2"]
    assert {s["attrs"]["gen_ai.operation.name"] for s in claude} == {
        "invoke_agent", "chat", "execute_tool"}


OLD_NAMES = ("gen_ai.system", "gen_ai.usage.prompt_tokens", "gen_ai.usage.completion_tokens",
             "gen_ai.workflow.name")


@pytest.mark.parametrize("setting", [None, "", "gen_ai_latest_experimental",
                                     "http,gen_ai_latest_experimental",
                                     " gen_ai_latest_experimental , database/dup",
                                     "http/dup", "gen_ai_latest_experimental/dup"])
@pytest.mark.slow  # over half a second: out of the fast loop
def test_every_opt_in_setting_exports_v0_1_0_and_no_older_name(agent, setting):
    """v0.1.0's transition plan: instrumentations that emitted v1.36.0 or earlier keep it
    by default and emit only the latest under gen_ai_latest_experimental. This export
    never emitted an old name, so every setting gives the same latest spans."""
    proc = gasp(agent, "import", "claude-code", str(CLAUDE_TRANSCRIPT))
    assert proc.returncode == 0, out(proc)
    _import(agent, WORKFLOW)
    data = _export(agent, None if setting is None else {"OTEL_SEMCONV_STABILITY_OPT_IN": setting})
    assert data == _export(agent)
    spans = _all_spans(data)
    for span in spans:
        assert not set(OLD_NAMES) & set(span["attrs"]), span["name"]
        if span["attrs"]["gen_ai.operation.name"] == "invoke_agent":
            assert span["kind"] == 1 and "gen_ai.agent.id" not in span["attrs"]
            assert span["attrs"]["gen_ai.agent.name"] == "tester"
    assert {s["attrs"]["gen_ai.operation.name"] for s in spans} == {
        "invoke_agent", "chat", "execute_tool"}


def test_a_session_named_only_on_an_inference_span_is_the_runs(agent):
    """v0.1.0 makes gen_ai.conversation.id conditionally required on inference spans:
    an agent span without it takes the one its calls carry."""
    data = _request([
        _span(ROOT, "invoke_agent bot", {"gen_ai.operation.name": "invoke_agent"},
              parent=None, start=0),
        _span("71f067aa0ba902b7", "chat m", {"gen_ai.operation.name": "chat",
                                             "gen_ai.conversation.id": "thread_42"})])
    (result,) = _import(agent, data)
    run = load_agent(agent).folded.graph.node(result.run_id)["props"]
    assert run["metadata"]["source"]["conversation_id"] == "thread_42"
    spans = _all_spans(_export(agent))
    assert [s["attrs"].get("gen_ai.conversation.id") for s in spans] == ["thread_42"] * 2
