"""Factory Droid: Claude-Code-shaped hooks in ``.factory/settings.json`` (merged in, the
file given back byte for byte), payloads written from Factory's hooks reference
(PascalCase events, snake_case fields; its tools Create, Edit, Execute) recorded
through the one path once, AGENTS.md, doctor and its ``.factory/mcp.json``."""

from __future__ import annotations

import json

import pytest

from git_gasp.adapters.dialects.table import DIALECTS
from git_gasp.adapters.payloads import detect_agent, parse_hook_payload
from git_gasp.adapters.wiring.agent_hooks import our_entries
from tests.adapters.samples import DATA, read_jsonl, replay_session, spine_of
from tests.testing.run import gasp, git, out

DROID_HOOKS = DATA / "droid-docs" / "hook-payloads.jsonl"
MINE = (b'{\n  "model": "claude-sonnet-4",\n  "hooks": {"PostToolUse": [{"matcher": '
        b'"Edit|Create", "hooks": [{"type": "command", "command": "./fmt.sh"}]}]}\n}\n')


def test_payloads_read_as_claude_codes():
    rows = read_jsonl(DROID_HOOKS)
    assert detect_agent(rows[0]) == "droid"
    hooks = [parse_hook_payload(row) for row in rows]
    assert {h.agent for h in hooks} == {"droid"}
    failed = hooks[7]
    assert (failed.tool_name, failed.exit_code, failed.is_error) == ("Execute", 1, True)
    assert hooks[3].output == "created /home/dev/app/calc.py"
    assert our_entries("droid", "git-gasp-hook droid")["PreToolUse"] == [
        {"matcher": "*", "hooks": [{"type": "command", "command": "git-gasp-hook droid",
                                    "timeout": 60}]}]
    assert "PostToolUseFailure" not in DIALECTS["droid"].events  # Droid has none


@pytest.mark.slow  # drives the CLI several times
def test_install_and_uninstall_give_the_settings_back(tmp_path):
    repo = tmp_path / "app"
    settings = repo / ".factory" / "settings.json"
    settings.parent.mkdir(parents=True)
    git(repo, "init", "-q")
    settings.write_bytes(MINE)
    proc = gasp(repo, "adapt", "droid", "install", "--mcp")
    assert proc.returncode == 0, out(proc)
    assert "installed git-gasp hooks for 6 events" in out(proc)
    assert ".factory/hooks.json" in out(proc)  # where newer Droids look first
    data = json.loads(settings.read_bytes())
    assert data["model"] == "claude-sonnet-4"
    assert data["hooks"]["PostToolUse"][0]["hooks"][0]["command"] == "./fmt.sh"
    mcp = json.loads((repo / ".factory" / "mcp.json").read_text())
    assert mcp["mcpServers"]["gasp"] == {"command": "git", "args": ["gasp", "mcp"]}
    proc = gasp(repo, "adapt", "droid", "install", "--uninstall", "--mcp")
    assert proc.returncode == 0 and "removed 6 git-gasp hook(s)" in out(proc)
    assert settings.read_bytes() == MINE
    local = gasp(repo, "adapt", "droid", "install", "--scope", "local")
    assert local.returncode == 0 and (repo / ".factory" / "settings.local.json").exists()
    proc = gasp(repo, "uninstall")
    assert proc.returncode == 0 and "settings.local.json" in out(proc)
    assert not (repo / ".factory" / "settings.local.json").exists()


@pytest.mark.slow  # drives the CLI several times
def test_prime_writes_agents_md_and_doctor_checks(tmp_path):
    assert gasp(tmp_path, "init", "bot").returncode == 0
    repo = tmp_path / "bot"
    proc = gasp(repo, "adapt", "droid", "prime")
    assert proc.returncode == 0, out(proc)
    assert "adapt droid" in (repo / "AGENTS.md").read_text()
    assert gasp(repo, "adapt", "droid", "install").returncode == 0
    found = [f for f in json.loads(gasp(repo, "doctor", "--json").stdout)
             if f["topic"] == "agent-hooks"]
    assert [f["level"] for f in found] == ["ok"], found
    assert "Factory Droid runs git-gasp's hook for 6 events" in found[0]["what"]


@pytest.mark.slow
def test_the_session_replays_into_a_conformant_run_once(agent):
    rows = [dict(r, cwd=str(agent)) for r in read_jsonl(DROID_HOOKS)]
    events = replay_session(agent, "droid", rows)
    log = (agent / "state/events.jsonl").read_bytes()
    assert [e["payload"]["tool"] for e in events if e["kind"] == "tool.called"] == [
        "Create", "Create", "Execute", "Edit", "Execute", "Execute"]
    assert spine_of(events) == (["Failed", "Passed"], "promoted")
    check = gasp(agent, "check")
    assert check.returncode == 0, out(check)
    # Factory's reference gives a prompt no id (Claude Code's prompt_id): the same
    # session sent again after it closed is a new prompt, a run of its own
    replay_session(agent, "droid", rows)
    again = read_jsonl(agent / "state/events.jsonl")[len(events):]
    assert [e["kind"] for e in again].count("run.started") == 1
    assert log == (agent / "state/events.jsonl").read_bytes()[:len(log)]
