"""`git gasp export otel`: runs as OTLP/JSON GenAI spans, valid `opentelemetry-proto`
messages, the same bytes every time.

The input log (data/otel-input.jsonl) was written with AgentState (a goal, a failed
run with a failed model call and a failed tool call, a completed run, a run still
open) and given readable ids and fixed times. Regenerate the expected output with
``GASP_REGEN_GOLDEN=1`` after a deliberate change, and read the diff.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
from pathlib import Path

import pytest

from git_gasp import __version__
from git_gasp.otel.exporter import export_otel
from git_gasp.otel.otlp import decode_attributes
from tests.testing.run import commit_all, gasp, out

DATA = Path(__file__).parent / "data"
INPUT = DATA / "otel-input.jsonl"
GOLDEN = DATA / "otel-golden.jsonl"
VERSION = b"@VERSION@"


@pytest.fixture
def golden_repo(agent):
    shutil.copy(INPUT, agent / "state/events.jsonl")
    commit_all(agent, "the golden log")
    return agent


def proto_parse(line: bytes):
    """`line` as an ExportTraceServiceRequest, unknown fields rejected. OTLP/JSON writes
    ids as hex where the generic proto3 JSON mapping has base64: translated first."""
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    obj = json.loads(line)
    for rs in obj["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    return json_format.Parse(json.dumps(obj), ExportTraceServiceRequest(),
                             ignore_unknown_fields=False)


def _spans(data: bytes) -> list[list[dict]]:
    """Per line, its spans with decoded attributes."""
    runs = []
    for line in data.splitlines():
        obj = json.loads(line)
        spans = obj["resourceSpans"][0]["scopeSpans"][0]["spans"]
        for s in spans:
            s["attrs"] = decode_attributes(s["attributes"])
        runs.append(spans)
    return runs


def test_export_is_the_golden_bytes(golden_repo):
    data = export_otel(golden_repo)
    if os.environ.get("GASP_REGEN_GOLDEN"):
        GOLDEN.write_bytes(data.replace(__version__.encode(), VERSION))
    assert data == GOLDEN.read_bytes().replace(VERSION, __version__.encode())
    assert export_otel(golden_repo) == data  # and again: nothing random, nothing timed


def test_every_line_is_an_export_trace_service_request(golden_repo):
    from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

    lines = export_otel(golden_repo).splitlines()
    assert len(lines) == 3  # one request per run
    for line in lines:
        request = proto_parse(line)
        (rs,) = request.resource_spans
        assert rs.resource.attributes[0].key == "service.name"
        (ss,) = rs.scope_spans
        assert ss.scope.name == "git-gasp" and ss.scope.version == __version__
        root, *calls = ss.spans
        assert len(root.trace_id) == 16 and len(root.span_id) == 8 and not root.parent_span_id
        for span in calls:
            assert span.trace_id == root.trace_id and span.parent_span_id == root.span_id
            assert len(span.span_id) == 8 and span.end_time_unix_nano >= span.start_time_unix_nano
        assert root.kind == Span.SPAN_KIND_INTERNAL
        assert {s.kind for s in calls} <= {Span.SPAN_KIND_CLIENT, Span.SPAN_KIND_INTERNAL}
        for span in ss.spans:
            assert span.status.code in (Status.STATUS_CODE_UNSET, Status.STATUS_CODE_ERROR)


def test_bad_field_is_rejected_by_the_validation():
    """The validation would notice a field the proto does not have."""
    from google.protobuf.json_format import ParseError

    line = (b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"' + b"ab" * 16
            + b'","spanId":"' + b"cd" * 8 + b'","nme":"x"}]}]}]}')
    with pytest.raises(ParseError):
        proto_parse(line)


def test_spans_follow_the_genai_conventions(golden_repo):
    failed_run, done, running = _spans(export_otel(golden_repo))
    root, plan, edit, review, tests = failed_run
    assert root["name"] == "invoke_agent tester"
    assert root["attrs"]["gen_ai.operation.name"] == "invoke_agent"
    assert root["attrs"]["gen_ai.agent.name"] == "tester"
    assert "gen_ai.agent.id" not in root["attrs"]  # v0.1.0: not on internal agent spans
    assert root["attrs"]["gasp.run.id"] == "run_0001"
    assert root["attrs"]["gasp.run.outcome"] == "failed"
    assert root["attrs"]["gasp.goal.id"] == "goal_0001"
    assert root["attrs"]["gasp.event.id"].startswith("event_")
    assert root["status"] == {"code": 2, "message": "failed"}
    assert plan["name"] == "chat claude-sonnet-4" and plan["kind"] == 3
    assert plan["attrs"]["gen_ai.operation.name"] == "chat"
    assert plan["attrs"]["gen_ai.request.model"] == "claude-sonnet-4"
    assert plan["attrs"]["gen_ai.provider.name"] == "anthropic"
    assert plan["attrs"]["gen_ai.usage.input_tokens"] == 120
    assert plan["attrs"]["gen_ai.usage.output_tokens"] == 40
    assert plan["status"] == {}
    assert edit["name"] == "execute_tool bash" and edit["kind"] == 1
    assert edit["attrs"]["gen_ai.tool.name"] == "bash"
    assert edit["attrs"]["gen_ai.tool.call.id"] == edit["attrs"]["gasp.node.id"]
    assert review["status"] == {"code": 2, "message": "rate limited (429)"}
    assert review["attrs"]["error.type"] == "_OTHER"
    assert tests["status"] == {"code": 2, "message": "exit status 1"}
    assert tests["attrs"]["gasp.status"] == "failed"
    assert done[0]["status"] == {} and done[0]["attrs"]["gasp.run.outcome"] == "completed"
    assert done[1]["attrs"]["gen_ai.usage.input_tokens"] == 10  # prompt_tokens, renamed
    assert done[2]["attrs"]["gen_ai.tool.call.id"] == "call_abc"  # the agent's own call id
    assert running[0]["attrs"]["gasp.status"] == "running"
    assert "gasp.run.outcome" not in running[0]["attrs"]
    assert running[1]["attrs"]["gasp.status"] == "running"
    assert len({s["traceId"] for spans in (failed_run, done, running) for s in spans}) == 3


def test_one_run_by_id_or_unique_prefix(golden_repo):
    exporter_lines = export_otel(golden_repo).splitlines(keepends=True)
    assert export_otel(golden_repo, "run_0002") == exporter_lines[1]
    assert export_otel(golden_repo, "run_0003") == exporter_lines[2]


@pytest.mark.parametrize(("run", "message"), [
    ("run_9", "no run 'run_9' in state/events.jsonl"),
    ("run_000", r"run 'run_000' is ambiguous: 3 match \(run_0001, run_0002, run_0003\)"),
])
def test_unknown_or_ambiguous_run_is_a_usage_error(golden_repo, run, message):
    from git_gasp.base.errors import UsageError

    with pytest.raises(UsageError, match=message):
        export_otel(golden_repo, run)


@pytest.mark.slow  # over half a second: out of the fast loop
def test_cli_stdout_file_and_one_line_errors(golden_repo, tmp_path):
    proc = gasp(golden_repo, "export", "otel", "--all")
    assert proc.returncode == 0, out(proc)
    assert proc.stdout == export_otel(golden_repo)
    target = tmp_path / "traces.jsonl"
    proc = gasp(golden_repo, "export", "otel", "run_0002", "-o", str(target))
    assert proc.returncode == 0, out(proc)
    assert target.read_bytes() == proc.stdout + export_otel(golden_repo, "run_0002")
    assert "wrote 1 run(s)" in out(proc)
    proc = gasp(golden_repo, "export", "otel")
    assert proc.returncode == 2
    assert out(proc).strip() == "git gasp: error: name one RUN to export, or --all (not both)"
    proc = gasp(golden_repo, "export", "otel", "run_nope")
    assert proc.returncode == 2 and "Traceback" not in out(proc)
    assert out(proc).strip() == "git gasp: error: no run 'run_nope' in state/events.jsonl"


def test_empty_repo_is_a_one_line_error(agent):
    proc = gasp(agent, "export", "otel", "--all")
    assert proc.returncode == 1
    assert out(proc).strip() == "git gasp: error: no runs in state/events.jsonl: nothing to export"
