"""Every write path redacts (issue 49): a token of each common family, typed or passed
to the library, the CLI (`record`, `run`, `memory add`, `commit-run`), the MCP write
tools and the sink, is found in no file of the repository and no git object; the
store's append is the one place that redacts (the domain event and its ops pair)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_gasp.mcp import writes
from git_gasp.mcp.service import Service
from git_gasp.protocol.envelope import Event
from git_gasp.redact.redactor import token_for
from git_gasp.runtime.memory import Facts
from git_gasp.runtime.sink import StateSink
from git_gasp.runtime.state import AgentState
from git_gasp.store.redacting import redact_events
from tests.testing.planting import family_leaks, family_tokens
from tests.testing.run import gasp, git, out


def _all(tokens: dict[str, str]) -> str:
    return " and ".join(tokens.values())


def test_redact_events_covers_payload_actor_and_correlation_and_is_idempotent():
    tokens = family_tokens("unit")
    gh = tokens["github_token"]
    event = Event("event_1", 1, 0, "user", f"me {gh}", "observation.created",
                  {"summary": _all(tokens), "nested": [{"k": gh}]}, None, f"run {gh}")
    redact_events([event])
    line = json.dumps(event.to_dict())
    for family, token in tokens.items():
        assert token.split("\n")[0] not in line or family == "url_password", family
    assert token_for("github_token", gh) in event.actor_id
    assert token_for("github_token", gh) in event.correlation_id
    before = json.dumps(event.to_dict())
    redact_events([event])
    assert json.dumps(event.to_dict()) == before  # idempotent: redacting twice changes nothing


def test_library_writes_are_redacted_in_the_log_the_graph_and_memory(agent: Path):
    tokens = family_tokens("library")
    text = _all(tokens)
    with AgentState.open(agent, "w") as st:
        run = st.start_run(text)
        goal = st.record_goal(f"goal {tokens['aws_access_key']}", text)
        obs = st.record_observation(text, about=goal, source=tokens["openai_key"],
                                    metadata={"note": text, "api_key": "hunter2hunter2"})
        Facts(st).add(text, [obs])
        st.finish_run(f"done {tokens['github_token']}", run_id=run)
        stored = st.graph.nodes[obs]["props"]["summary"]
    assert token_for("github_token", tokens["github_token"]) in stored  # the graph in memory too
    git(agent, "add", "-A")
    git(agent, "commit", "-qm", "library writes")
    assert family_leaks(agent, tokens) == []
    assert "hunter2hunter2" not in (agent / "state" / "events.jsonl").read_text()
    assert gasp(agent, "check").returncode == 0


@pytest.mark.slow  # over half a second: out of the fast loop
def test_cli_record_run_memory_and_commit_run_are_redacted(agent: Path):
    tokens = family_tokens("cli")
    text = _all(tokens)
    assert gasp(agent, "run", "start", "--task", text,
                "--metadata", json.dumps({"why": text})).returncode == 0
    obs = out(gasp(agent, "record", "observation", "--summary", text)).strip()
    assert obs
    assert gasp(agent, "memory", "add", text, "--from", obs).returncode == 0
    one_line = " ".join(t for f, t in tokens.items() if f != "private_key")
    assert gasp(agent, "run", "finish", "--outcome", one_line).returncode == 0
    proc = gasp(agent, "commit-run", "--outcome", one_line)
    assert proc.returncode == 0, proc.stderr
    assert family_leaks(agent, tokens) == []
    message = git(agent, "log", "-1", "--format=%B")
    assert token_for("aws_access_key", tokens["aws_access_key"]) in message
    assert gasp(agent, "check").returncode == 0


def _enable_writes(agent: Path) -> None:
    config = agent / ".agent" / "config.toml"
    config.write_bytes(config.read_bytes() + b"\n[mcp]\nwrite = true\nwait = 0\ncommit = true\n")
    git(agent, "add", "-A")
    git(agent, "commit", "-qm", "mcp writes on")


def test_mcp_write_tools_are_redacted(agent: Path):
    tokens = family_tokens("mcp")
    text = _all(tokens)
    _enable_writes(agent)
    service = Service(agent, "w")
    obs = writes.observe(service, text, source=tokens["slack_token"])["id"]
    writes.remember(service, text, [obs])
    writes.decide(service, "Approved", text)
    assert family_leaks(agent, tokens) == []


def test_the_sink_is_redacted(agent: Path):
    tokens = family_tokens("sink")
    text = _all(tokens)
    with StateSink.open(agent, worker_id="w") as sink:
        sink.on_run_started(text, metadata={"prompt": text})
        call = sink.on_tool_called("bash", input_summary=text)
        sink.on_tool_finished(call, output_summary=text)
        sink.on_decision("Approved", text)
        sink.on_run_finished("succeeded", error=text)
    assert sink.errors == 0, sink.last_error
    git(agent, "add", "-A")
    git(agent, "commit", "-qm", "sink writes")
    assert family_leaks(agent, tokens) == []
