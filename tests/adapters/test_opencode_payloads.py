"""OpenCode: git-gasp's own plugin file (written whole, removed on uninstall, a foreign
one refused), the events it sends read into the neutral events and recorded through
the one path once, AGENTS.md and doctor."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from git_gasp.adapters.dialects import opencode
from git_gasp.adapters.payloads import parse_hook_payload
from tests.adapters.samples import DATA, read_jsonl, replay_session, replays_once
from tests.testing.run import gasp, git, out

OPENCODE_EVENTS = DATA / "opencode-plugin" / "hook-payloads.jsonl"
LIVE_EVENTS = DATA / "opencode-1.18.33" / "hook-payloads.jsonl"  # what its plugin sent


def test_each_event_reads_as_its_neutral_event():
    rows = read_jsonl(OPENCODE_EVENTS)
    hooks = [parse_hook_payload(row, "opencode") for row in rows]
    assert [h.event for h in hooks][:3] == ["SessionStart", "UserPromptSubmit", "PreToolUse"]
    assert hooks[0].reason == "startup" and hooks[1].raw["prompt_id"] == "msg_01"
    assert hooks[1].prompt == "Fix the add function so the test passes, then commit"
    failed = hooks[7]
    assert (failed.tool_name, failed.tool_use_id) == ("bash", "call_3")
    assert (failed.exit_code, failed.is_error) == (1, True) and "1 failed" in failed.output
    assert [h.event for h in hooks][-2:] == ["Stop", "SessionEnd"]


def test_the_plugin_is_ours_alone(tmp_path):
    repo = tmp_path / "app"
    repo.mkdir()
    git(repo, "init", "-q")
    path, changed = opencode.install(repo, "git-gasp-hook opencode")
    assert changed and path == repo / ".opencode" / "plugins" / "git-gasp.js"
    text = path.read_text()
    assert opencode.ours(text) and opencode.plugin_agent(text) == "opencode"
    assert 'const COMMAND = ["git-gasp-hook", "opencode"];' in text
    for hook in ('"tool.execute.before"', '"tool.execute.after"', '"chat.message"',
                 '"session.idle"'):
        assert hook in text
    assert opencode.install(repo, "git-gasp-hook opencode") == (path, False)
    assert opencode.install(repo, None) == (path, True) and not path.exists()
    path.write_text("export const Mine = async () => ({})\n")
    proc = gasp(repo, "adapt", "opencode", "install")
    assert proc.returncode == 1 and "not git-gasp's plugin" in out(proc)
    assert path.read_text() == "export const Mine = async () => ({})\n"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_plugin_is_a_module_node_loads(tmp_path):
    """What OpenCode imports: a module exporting one plugin function whose hooks send
    the events as JSON on the command's stdin."""
    repo = tmp_path / "app"
    repo.mkdir()
    sink = tmp_path / "sink.sh"
    sink.write_text(f"#!/bin/sh\ncat >> {tmp_path}/got.jsonl\necho >> {tmp_path}/got.jsonl\n")
    sink.chmod(0o755)
    path = repo / "git-gasp.mjs"
    path.write_text(opencode.plugin("git-gasp-hook opencode").replace(
        '["git-gasp-hook", "opencode"]', json.dumps([str(sink)])))
    script = (f"const m = await import({json.dumps(str(path))});"
              "const h = await m.GitGasp({ directory: '/w' });"
              "await h['tool.execute.before']({ tool: 'bash', sessionID: 's1', callID: 'c1' },"
              " { args: { command: 'ls' } });"
              "const a = { id: 'm1', sessionID: 's1', role: 'assistant', time: { created: 1 } };"
              "const upd = (info) => h.event({ event: { type: 'message.updated',"
              " properties: { info } } });"
              "await upd(a);"  # still streaming: not sent
              "await upd({ ...a, role: 'user', time: { created: 1, completed: 2 } });"
              "await upd({ ...a, time: { created: 1, completed: 2 } });"
              "await upd({ ...a, time: { created: 1, completed: 3 } });"  # sent already
              "await h.event({ event: { type: 'session.idle', properties: { sessionID: 's1' } } });"
              "await h.event({ event: { type: 'file.edited', properties: {} } });")
    proc = subprocess.run(["node", "--input-type=module", "-e", script],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    got = [json.loads(line) for line in (tmp_path / "got.jsonl").read_text().split("\n")
           if line.strip()]
    assert [g["hook_event_name"] for g in got] == ["tool.execute.before", "message.updated",
                                                   "session.idle"]
    assert got[1]["message"]["time"] == {"created": 1, "completed": 2}
    assert got[0]["args"] == {"command": "ls"} and got[0]["cwd"] == "/w"
    assert {g["session_id"] for g in got} == {"s1"}


@pytest.mark.slow  # drives the CLI several times
def test_prime_doctor_and_uninstall(tmp_path):
    assert gasp(tmp_path, "init", "bot").returncode == 0
    repo = tmp_path / "bot"
    assert gasp(repo, "adapt", "opencode", "prime").returncode == 0
    assert "adapt opencode" in (repo / "AGENTS.md").read_text()
    assert gasp(repo, "adapt", "opencode", "install").returncode == 0
    found = [f for f in json.loads(gasp(repo, "doctor", "--json").stdout)
             if f["topic"] == "agent-hooks"]
    assert [f["level"] for f in found] == ["ok"], found
    plugin = repo / ".opencode" / "plugins" / "git-gasp.js"
    plugin.write_text(plugin.read_text().replace("git-gasp-hook opencode`", "x`"))
    found = [f for f in json.loads(gasp(repo, "doctor", "--json").stdout)
             if f["topic"] == "agent-hooks"]
    assert found[0]["level"] == "error" and "was edited" in found[0]["what"]
    proc = gasp(repo, "uninstall")
    assert proc.returncode == 0 and not plugin.exists()


@pytest.mark.slow
def test_the_session_replays_into_a_conformant_run_once(agent):
    rows = [dict(r, cwd=str(agent)) for r in read_jsonl(OPENCODE_EVENTS)]
    assert replays_once(agent, "opencode", rows) == [
        "write", "write", "bash", "edit", "bash", "bash"]


@pytest.mark.slow  # over half a second: out of the fast loop
def test_mcp_entry_in_opencode_json_given_back(tmp_path):
    repo = tmp_path / "app"
    repo.mkdir()
    git(repo, "init", "-q")
    config = repo / "opencode.json"
    mine = b'{\n  "model": "x/y",\n  "mcp": {"other": {"type": "remote", "url": "u"}}\n}\n'
    config.write_bytes(mine)
    proc = gasp(repo, "adapt", "opencode", "install", "--mcp")
    assert proc.returncode == 0 and "registered the gasp MCP server" in out(proc), out(proc)
    data = json.loads(config.read_text())
    assert data["mcp"]["gasp"] == {"type": "local", "command": ["git", "gasp", "mcp"],
                                   "enabled": True}
    assert data["mcp"]["other"] == {"type": "remote", "url": "u"}
    proc = gasp(repo, "adapt", "opencode", "install", "--mcp", "--uninstall")
    assert proc.returncode == 0 and config.read_bytes() == mine, out(proc)
    config.write_bytes(b'{"mcp": {"gasp": {"type": "remote", "url": "u"}}}')
    plugin = repo / ".opencode" / "plugins" / "git-gasp.js"
    proc = gasp(repo, "adapt", "opencode", "install", "--mcp")
    assert proc.returncode == 1 and "not git-gasp's" in out(proc) and not plugin.exists()


def test_a_finished_assistant_message_reads_as_a_model_response():
    rows = [r for r in read_jsonl(LIVE_EVENTS) if r["hook_event_name"] == "message.updated"]
    h = parse_hook_payload(rows[0], "opencode")
    assert (h.event, h.model) == ("ModelResponse", "qwen3-coder-plus")
    msg = opencode.model_message(h.raw)
    assert msg is not None and msg["id"] == "msg_2528a54c3001VHMUBTE2nWlvGb"
    assert (msg["provider"], msg["stop_reason"], msg["error"]) == ("scripted", "tool-calls",
                                                                   None)
    assert msg["ended"] - msg["started"] == 4222 and msg["usage"]["input"] == 1082
    unfinished = dict(rows[0], message=dict(rows[0]["message"], time={"created": 1}))
    assert opencode.model_message(unfinished) is None
    asked = dict(rows[0], message=dict(rows[0]["message"], role="user"))
    assert opencode.model_message(asked) is None
    failed = dict(rows[0], message=dict(rows[0]["message"], error={
        "name": "APIError", "data": {"message": "rate limited"}}))
    assert opencode.model_message(failed)["error"] == "APIError: rate limited"


@pytest.mark.slow  # drains a session's payloads twice
def test_each_finished_assistant_message_is_one_model_call_once(agent):
    rows = [dict(r, cwd=str(agent)) for r in read_jsonl(LIVE_EVENTS)]
    events = replay_session(agent, "opencode", rows)
    log = (agent / "state/events.jsonl").read_bytes()
    called = [e["payload"] for e in events if e["kind"] == "model.called"]
    assert [(c["model"], c["provider"]) for c in called] == [
        ("qwen3-coder-plus", "scripted")] * 7
    finished = [e["payload"] for e in events if e["kind"] == "model.finished"]
    assert [f["stop_reason"] for f in finished] == ["tool-calls"] * 6 + ["stop"]
    assert [f["usage"]["input"] for f in finished][:2] == [1082, 1121]
    assert finished[0]["duration_ms"] == 4222 and all(f["success"] for f in finished)
    assert [f["id"] for f in finished] == [c["id"] for c in called]
    check = gasp(agent, "check")
    assert check.returncode == 0, out(check)
    replay_session(agent, "opencode", rows)  # every payload again: nothing more
    assert (agent / "state/events.jsonl").read_bytes() == log
