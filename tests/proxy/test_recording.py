"""What the proxy records: a run per session, model calls, tool calls and their results as
the next request carries them, commits as patches; committed at the session's end, and
`git gasp check` passes on it."""

from __future__ import annotations

import asyncio
import json
import subprocess

import pytest

from tests.proxy.recording import domain, events, post, record
from tests.proxy.upstream import (
    JSON_HEADERS,
    SSE_HEADERS,
    anthropic_stream,
    chat_stream,
    chat_whole,
    gemini_stream,
    responses_stream,
)
from tests.testing.run import gasp, git, out

KEY = "sk-ant-api03-" + "Q" * 40
LS = "README.md\nnotes.txt"


def _tool_results(body: bytes) -> int:
    try:
        doc = json.loads(body)
    except ValueError:
        return 0
    return sum(1 for m in doc.get("messages", []) if isinstance(m.get("content"), list)
               for b in m["content"] if b.get("type") == "tool_result")


def _claude(method, path, body):
    if _tool_results(body):
        return 200, SSE_HEADERS, anthropic_stream(text="Two files; committed.")
    return 200, SSE_HEADERS, anthropic_stream(tool=("toolu_01", "Bash", {"command": "ls"}))


FIRST = {"model": "claude-test", "stream": True, "max_tokens": 100,
         "messages": [{"role": "user", "content": "List the files and note them"}]}
SECOND = {**FIRST, "messages": [
    *FIRST["messages"],
    {"role": "assistant", "content": [
        {"type": "text", "text": "Hello there."},
        {"type": "tool_use", "id": "toolu_01", "name": "Bash", "input": {"command": "ls"}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01",
                                  "content": [{"type": "text", "text": LS}]}]}]}


def test_a_session_is_recorded_committed_and_conformant(agent):
    headers = {"x-api-key": KEY, "x-gasp-session": "sess-1",
               "anthropic-version": "2023-06-01"}

    async def client(url):
        await post(url + "/v1/messages", FIRST, headers)
        await asyncio.sleep(0.05)
        (agent / "notes.txt").write_text("two files\n")
        git(agent, "add", "notes.txt")
        git(agent, "commit", "-qm", "Note the files", "--no-verify")
        await post(url + "/v1/messages", SECOND, headers)
        return git(agent, "rev-parse", "HEAD").strip()

    sha, closed = record(agent, _claude, client)
    assert len(closed) == 1 and "run_proxy.sess-1 finished (patched), committed" in closed[0]
    evs = domain(agent)
    kinds = [e.kind for e in evs]
    assert kinds == ["run.started", "goal.created", "model.called", "model.finished",
                     "tool.called", "patch.proposed", "artifact.attached", "tool.finished",
                     "observation.created", "model.called", "model.finished",
                     "run.finished"], kinds
    by = {k: [e for e in evs if e.kind == k] for k in set(kinds)}
    assert by["run.started"][0].payload["run_id"] == "run_proxy.sess-1"
    called, finished = by["model.called"][0].payload, by["model.finished"][0].payload
    assert called["model"] == "claude-test" and called["provider"] == "anthropic"
    assert called["input_summary"] == "List the files and note them"
    assert finished["success"] is True
    assert finished["stop_reason"] == "tool_use"
    assert finished["metadata"]["status"] == 200
    with_usage = [e for e in events(agent) if e.kind == "state.ops_applied"
                  and e.causation_id == by["model.finished"][0].id]
    props = with_usage[0].payload[0]["UpdateNode"]["props"]
    assert props["usage"] == {"input_tokens": 12, "output_tokens": 7}
    assert isinstance(props["duration_ms"], int)
    tool = by["tool.called"][0].payload
    assert tool["tool"] == "Bash" and json.loads(tool["input_summary"]) == {"command": "ls"}
    assert by["tool.finished"][0].payload["output_summary"] == LS
    assert by["tool.finished"][0].payload["id"] == tool["id"]
    patch = by["patch.proposed"][0].payload
    assert patch["references_commit"] == sha and patch["title"] == "Note the files"
    assert patch["metadata"]["files"] == ["notes.txt"]
    assert by["goal.created"][0].payload["title"].startswith("List the files")
    assert git(agent, "log", "-1", "--format=%s").startswith("run run_proxy.sess-1: patched")
    assert git(agent, "status", "--porcelain", "--untracked-files=no") == ""
    check = gasp(agent, "check")
    assert check.returncode == 0, out(check)
    found = subprocess.run(["grep", "-rl", KEY[:30], str(agent)], capture_output=True)
    assert found.stdout == b"", "the API key was stored"


@pytest.mark.parametrize("api", ["chat", "responses", "gemini"])
def test_each_api_records_its_tool_call_and_result(agent, api):
    if api == "chat":
        path = "/v1/chat/completions"
        first = {"model": "gpt-test", "stream": True,
                 "messages": [{"role": "user", "content": "list"}]}
        second = {**first, "messages": [
            *first["messages"],
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "shell", "arguments": '{"cmd": "ls"}'}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": LS}]}
        answers = [chat_stream(tool=("call_1", "shell", {"cmd": "ls"})), chat_whole()]
        name, inp = "shell", {"cmd": "ls"}
    elif api == "responses":
        path = "/v1/responses"
        first = {"model": "gpt-resp", "stream": True,
                 "input": [{"role": "user", "content": "list"}]}
        second = {**first, "input": [
            *first["input"],
            {"type": "function_call", "call_id": "call_9", "name": "exec",
             "arguments": '{"cmd": ["ls"]}'},
            {"type": "function_call_output", "call_id": "call_9", "output": LS}]}
        answers = [responses_stream(call=("call_9", "exec", {"cmd": ["ls"]})),
                   responses_stream()]
        name, inp = "exec", {"cmd": ["ls"]}
    else:
        path = "/v1beta/models/gemini-test:streamGenerateContent?alt=sse"
        first = {"contents": [{"role": "user", "parts": [{"text": "list"}]}]}
        second = {"contents": [
            *first["contents"],
            {"role": "model", "parts": [{"text": "Looking."},
                                        {"functionCall": {"name": "run", "args": {"cmd": "ls"}}}]},
            {"role": "user", "parts": [{"functionResponse": {
                "name": "run", "response": {"output": LS}}}]}]}
        answers = [gemini_stream(call=("run", {"cmd": "ls"})), gemini_stream()]
        name, inp = "run", {"cmd": "ls"}
    seen = []

    def reply(method, p, body):
        seen.append(p)
        chunks = answers[min(len(seen), 2) - 1]
        return 200, (JSON_HEADERS if chunks[0].startswith(b"{") else SSE_HEADERS), chunks

    async def client(url):
        h = {"x-gasp-session": f"s-{api}", "Authorization": "Bearer " + KEY}
        await post(url + path, first, h)
        await post(url + path, second, h)

    record(agent, reply, client)
    evs = domain(agent)
    kinds = [e.kind for e in evs]
    assert kinds.count("model.called") == 2 and kinds.count("model.finished") == 2
    (tc,) = [e.payload for e in evs if e.kind == "tool.called"]
    (tf,) = [e.payload for e in evs if e.kind == "tool.finished"]
    assert tc["tool"] == name and json.loads(tc["input_summary"]) == inp
    assert tf["id"] == tc["id"] and tf["success"] is True
    assert LS.splitlines()[0] in tf["output_summary"]
    assert kinds.index("tool.called") < kinds.index("tool.finished")
    usage = [e for e in events(agent) if e.kind == "state.ops_applied"
             and any("usage" in (op.get("UpdateNode") or {}).get("props", {})
                     for op in e.payload)]
    assert usage, "no token usage recorded"
    assert gasp(agent, "check").returncode == 0


@pytest.mark.slow  # over half a second: out of the fast loop
def test_calls_without_a_session_header_split_on_the_idle_gap(agent):
    async def client(url):
        await post(url + "/v1/chat/completions", {"model": "m", "messages": [
            {"role": "user", "content": "one"}]})
        await asyncio.sleep(1.5)
        await post(url + "/v1/chat/completions", {"model": "m", "messages": [
            {"role": "user", "content": "two"}]})

    _got, closed = record(agent, lambda m, p, b: (200, JSON_HEADERS, chat_whole()), client,
                          idle=0.6)
    runs = [e.payload["run_id"] for e in domain(agent) if e.kind == "run.started"]
    assert len(runs) == 2 and len(set(runs)) == 2
    assert all(r.startswith("run_proxy.") for r in runs)
    assert gasp(agent, "check").returncode == 0


def test_a_commit_made_while_the_first_call_waits_to_be_recorded_is_the_sessions(
        agent, monkeypatch):
    """The session starts from the HEAD its first call arrived at, not from the one the
    recorder finds when it gets to record it (later: here, the lease was held)."""
    from git_gasp.proxy import recorder as recorder_mod
    from git_gasp.runtime import AgentState

    monkeypatch.setattr(recorder_mod, "LEASE_WAIT_S", 0.1)
    other = AgentState.open(agent, "someone-else")
    other.store.lease.ensure()

    async def client(url):
        await post(url + "/v1/messages", FIRST, {"x-gasp-session": "late"})
        (agent / "notes.txt").write_text("two files\n")
        git(agent, "add", "notes.txt")
        git(agent, "commit", "-qm", "Note the files", "--no-verify")
        await asyncio.sleep(0.3)
        other.close()  # the recorder gets the lease now, after the commit
        await post(url + "/v1/messages", SECOND, {"x-gasp-session": "late"})
        return git(agent, "rev-parse", "HEAD").strip()

    sha, closed = record(agent, _claude, client)
    (patch,) = [e.payload for e in domain(agent) if e.kind == "patch.proposed"]
    assert patch["references_commit"] == sha
    assert "run_proxy.late finished (patched)" in closed[0]


def test_secrets_in_what_passes_are_redacted_before_they_are_stored(agent):
    secret = "ghp_" + "a1B2c3D4e5" * 4
    first = {"model": "claude-test", "stream": True, "messages": [
        {"role": "user", "content": f"use the token {secret} to list"}]}
    second = {**first, "messages": [
        *first["messages"],
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_01",
                                           "name": "Bash", "input": {"command": "ls"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01",
                                      "content": f"GITHUB_TOKEN={secret}"}]}]}

    def reply(method, path, body):
        if _tool_results(body):
            return 200, SSE_HEADERS, anthropic_stream(text=f"I used {secret}.")
        return 200, SSE_HEADERS, anthropic_stream(
            tool=("toolu_01", "Bash", {"command": f"curl -H 'token: {secret}' x"}))

    async def client(url):
        await post(url + "/v1/messages", first, {"x-gasp-session": secret})
        await post(url + "/v1/messages", second, {"x-gasp-session": secret})

    _got, closed = record(agent, reply, client)
    assert len(closed) == 1 and "committed" in closed[0]
    log = (agent / "state" / "events.jsonl").read_text()
    assert secret not in log and "[REDACTED" in log
    assert not any(secret in p.name for p in agent.rglob("*"))
    kept = [p for p in (agent / ".git" / "gasp").rglob("*") if p.is_file()
            and secret.encode() in p.read_bytes()]
    assert kept == [], "kept unredacted under the git dir"
    assert gasp(agent, "check").returncode == 0
