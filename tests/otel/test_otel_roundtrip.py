"""The OpenTelemetry round trip through the CLI: runs written with AgentState, `git gasp
export otel`, `git gasp import otel` into a fresh `git gasp init` repo: the same runs,
calls and outcomes, a conformant repo, and nothing new on a second import."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_gasp.otel.otlp import decode_attributes
from git_gasp.runtime import AgentState
from git_gasp.store.agent import load_agent
from tests.otel.test_otel_import import FOREIGN
from tests.testing.repos import copy_repo
from tests.testing.run import commit_all, gasp, git, out

pytestmark = pytest.mark.slow

FIELDS = {
    "run": ("task", "status", "outcome"),
    "model_call": ("run_id", "model", "provider", "status", "success", "input_summary",
                   "output_summary"),
    "tool_call": ("run_id", "tool", "status", "success", "input_summary", "output_summary"),
}


def _write_runs(repo: Path) -> None:
    with AgentState.open(repo, "agent-under-test") as st:
        st.start_run("fix the flaky test")
        m = st.record_model_call("claude-sonnet-4", provider="anthropic", input_summary="plan")
        st.finish_model_call(m, output_summary="rerun it",
                             metadata={"usage": {"input_tokens": 50, "output_tokens": 7}})
        t = st.record_tool_call("bash", input_summary="pytest -x")
        st.finish_tool_call(t, output_summary="2 passed")
        m = st.record_model_call("claude-sonnet-4", provider="anthropic", input_summary="again")
        st.finish_model_call(m, success=False, metadata={"error": "overloaded"})
        t = st.record_tool_call("bash", input_summary="pytest")
        st.finish_tool_call(t, output_summary="1 failed", success=False,
                            metadata={"error": "exit status 1"})
        st.finish_run("failed")
        st.start_run("write the changelog")
        m = st.record_model_call("gpt-4o", provider="openai", input_summary="summarize")
        st.finish_model_call(m, output_summary="done")
        st.finish_run("completed")
    commit_all(repo, "two runs")


def _nodes(repo: Path) -> dict[str, dict]:
    graph = load_agent(repo).folded.graph
    return {n["id"]: {"kind": n["kind"], **{f: n["props"].get(f) for f in FIELDS[n["kind"]]}}
            for n in graph.iter_nodes() if n["kind"] in FIELDS}


def _spans(data: bytes) -> list[dict]:
    """Every span, its attributes decoded, the fields a new log must change left out."""
    spans = []
    for line in data.splitlines():
        for s in json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"]:
            attrs = decode_attributes(s.pop("attributes"))
            attrs.pop("gasp.event.id")  # the importing repo's own events
            spans.append({**s, "attrs": attrs})
    return spans


def test_export_import_round_trip(agent, agent_template, tmp_path):
    _write_runs(agent)
    traces = tmp_path / "traces.jsonl"
    proc = gasp(agent, "export", "otel", "--all", "-o", str(traces))
    assert proc.returncode == 0, out(proc)
    fresh = copy_repo(agent_template, tmp_path / "fresh")
    proc = gasp(fresh, "import", "otel", str(traces))
    assert proc.returncode == 0, out(proc)
    assert out(proc).count("committed") == 2
    check = gasp(fresh, "check")
    assert check.returncode == 0, out(check)
    assert git(fresh, "status", "--porcelain") == ""
    assert "Outcome: failed" in git(fresh, "log", "-2", "--format=%B")
    assert _nodes(fresh) == _nodes(agent)  # the same ids, runs, calls and outcomes
    imported = load_agent(fresh).folded.graph
    failed = [n["props"] for n in imported.iter_nodes() if n["props"].get("status") == "failed"]
    assert sorted(p["error"] for p in failed) == ["exit status 1", "overloaded"]
    usage = [n["props"].get("usage") for n in imported.iter_nodes() if n["kind"] == "model_call"]
    assert usage[0] == {"input_tokens": 50, "output_tokens": 7}
    # exported again, the imported runs are the same spans: ids and times too
    again = gasp(fresh, "export", "otel", "--all")
    assert again.returncode == 0, out(again)
    assert _spans(again.stdout) == _spans(traces.read_bytes())
    # a second import, and an import into the repo the runs came from, add nothing
    log = (fresh / "state/events.jsonl").read_bytes()
    proc = gasp(fresh, "import", "otel", str(traces))
    assert proc.returncode == 0 and out(proc).count("already imported") == 2, out(proc)
    assert (fresh / "state/events.jsonl").read_bytes() == log
    log = (agent / "state/events.jsonl").read_bytes()
    proc = gasp(agent, "import", "otel", str(traces))
    assert proc.returncode == 0 and out(proc).count("already imported") == 2, out(proc)
    assert (agent / "state/events.jsonl").read_bytes() == log


def test_foreign_traces_import_conformant(agent, tmp_path):
    proc = gasp(agent, "import", "otel", str(FOREIGN))
    assert proc.returncode == 0, out(proc)
    assert out(proc).count("committed") == 3
    assert "1 span(s) outside any agent, model or tool span skipped" in out(proc)
    check = gasp(agent, "check")
    assert check.returncode == 0, out(check)
    assert git(agent, "status", "--porcelain") == ""
    export = gasp(agent, "export", "otel", "--all")
    assert export.returncode == 0, out(export)
    trace_ids = [json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]
                 for line in export.stdout.splitlines()]
    assert trace_ids[:2] == ["4bf92f3577b34da6a3ce929d0e0e4736",
                             "5bf92f3577b34da6a3ce929d0e0e4737"]  # the spans' own ids back


def test_bad_input_is_one_line(agent, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(FOREIGN.read_text().splitlines()[0] + "\n{nope\n")
    log = (agent / "state/events.jsonl").read_bytes()
    proc = gasp(agent, "import", "otel", str(bad))
    assert proc.returncode == 1, out(proc)
    assert out(proc).strip().splitlines() == [
        f"git gasp: error: {bad}:2: not JSON (Expecting property name enclosed in double "
        "quotes)"]
    assert (agent / "state/events.jsonl").read_bytes() == log  # nothing half-imported
    proc = gasp(agent, "import", "otel", "--all")
    assert proc.returncode == 2 and "--all finds agent sessions" in out(proc)
    proc = gasp(agent, "import", "otel", str(tmp_path / "missing.jsonl"))
    assert proc.returncode == 1 and out(proc).startswith("git gasp: error: ")


def test_golden_export_imports_conformant(agent, tmp_path):
    from git_gasp import __version__
    from tests.otel.test_otel_export import GOLDEN, VERSION

    traces = tmp_path / "golden.jsonl"
    traces.write_bytes(GOLDEN.read_bytes().replace(VERSION, __version__.encode()))
    proc = gasp(agent, "import", "otel", str(traces))
    assert proc.returncode == 0, out(proc)
    assert [line.split("(")[1].split(")")[0] for line in out(proc).splitlines()
            if "events (" in line] == ["failed", "completed", "abandoned"]
    check = gasp(agent, "check")
    assert check.returncode == 0, out(check)
    again = gasp(agent, "export", "otel", "--all")
    assert again.returncode == 0, out(again)
    before, after = _spans(traces.read_bytes()), _spans(again.stdout)
    before[0]["attrs"].pop("gasp.goal.id")  # that goal is not in this repo
    assert after[:-2] == before[:-2]
    assert after[-2]["attrs"]["gasp.run.outcome"] == "abandoned"  # the open run, closed
    assert after[-1] == before[-1]  # its call still running


def test_export_outside_an_agent_repo_is_one_line(tmp_path):
    proc = gasp(tmp_path, "export", "otel", "--all")
    assert proc.returncode == 2  # as every command outside an agent repository
    assert out(proc).startswith("git gasp: error: ") and len(out(proc).splitlines()) == 1
