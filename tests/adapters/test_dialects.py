"""The hook dialects: one table per agent, and what `adapt` does with it — `adapt list`,
Gemini CLI's and Qwen Code's install/uninstall (their settings given back byte for byte,
--mcp, the user scope), priming GEMINI.md, doctor's checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_gasp.adapters.dialects.table import DIALECTS, MODEL_EVENTS, neutral_event
from git_gasp.adapters.payloads import HOOK_EVENTS
from git_gasp.adapters.wiring.agent_hooks import AGENT_EVENTS, our_entries
from git_gasp.base.agentnames import AGENTS
from tests.testing.run import gasp, git, out

MINE = (b'{\n\t"theme": "Dracula",\n\t"hooks": {"BeforeTool": [{"matcher": "write_.*",'
        b' "hooks": [{"type": "command", "command": "./check.sh"}]}]},\n'
        b'\t"mcpServers": {"other": {"command": "srv"}}\n}\n')


def test_every_agent_has_a_dialect_mapped_onto_the_neutral_events():
    assert tuple(DIALECTS) == AGENTS
    for agent, d in DIALECTS.items():
        assert set(d.events.values()) <= set(HOOK_EVENTS + MODEL_EVENTS), agent
        assert set(d.tool_events) <= set(d.events) and set(d.async_events) <= set(d.events)
        assert "project" in d.settings and d.rung in (1, 2, 3) and d.records and d.tested
    assert AGENT_EVENTS["claude-code"] == HOOK_EVENTS
    assert neutral_event("gemini", "AfterAgent") == "Stop"
    assert neutral_event("gemini", "PreCompress") is None
    assert neutral_event("codex", "Stop") == "Stop"


def test_claude_code_and_codex_entries_are_as_before():
    """Moving them onto the table changed no byte they install."""
    pre = our_entries("claude-code", "git-gasp-hook claude-code")["PreToolUse"]
    assert pre == [{"matcher": "*", "hooks": [{"type": "command",
                    "command": "git-gasp-hook claude-code", "timeout": 60, "async": True}]}]
    assert our_entries("codex", "c")["Stop"] == [
        {"hooks": [{"type": "command", "command": "c", "timeout": 60}]}]


def test_gemini_entries_are_named_and_time_out_in_milliseconds():
    entries = our_entries("gemini", "git-gasp-hook gemini")
    assert list(entries) == list(DIALECTS["gemini"].events)
    assert entries["AfterTool"] == [{"matcher": "*", "hooks": [{
        "name": "git-gasp", "type": "command", "command": "git-gasp-hook gemini",
        "timeout": 60000}]}]
    assert "matcher" not in entries["BeforeModel"][0]


def test_adapt_list_shows_each_agent_its_rung_and_what_it_records(tmp_path):
    proc = gasp(tmp_path, "adapt", "list")
    assert proc.returncode == 0, out(proc)
    assert len(DIALECTS) >= 8  # the bar
    for d in DIALECTS.values():
        npm = f", npm {d.package}" if d.package else ""
        assert f"{d.agent} ({d.title}{npm}): rung {d.rung}" in out(proc)
    assert "model calls (BeforeModel/AfterModel, with the model)" in out(proc)
    assert "model calls (each finished assistant message, with the model" in out(proc)


@pytest.mark.slow  # drives the CLI several times
@pytest.mark.parametrize("agent", ["gemini", "qwen-code"])
def test_install_and_uninstall_give_the_settings_back(tmp_path, agent):
    repo = tmp_path / "app"
    settings = repo / DIALECTS[agent].settings["project"]
    settings.parent.mkdir(parents=True)
    git(repo, "init", "-q")
    settings.write_bytes(MINE)
    proc = gasp(repo, "adapt", agent, "install", "--mcp")
    assert proc.returncode == 0, out(proc)
    n = len(DIALECTS[agent].events)
    assert f"installed git-gasp hooks for {n} events" in out(proc)
    data = json.loads(settings.read_bytes())
    assert data["theme"] == "Dracula" and data["mcpServers"]["other"] == {"command": "srv"}
    assert data["mcpServers"]["gasp"] == {"command": "git", "args": ["gasp", "mcp"]}
    assert data["hooks"]["BeforeTool"][0]["hooks"][0]["command"] == "./check.sh"
    assert set(data["hooks"]) >= set(DIALECTS[agent].events)
    installed = settings.read_bytes()
    again = gasp(repo, "adapt", agent, "install", "--mcp")
    assert "nothing changed" in out(again) and settings.read_bytes() == installed
    proc = gasp(repo, "adapt", agent, "install", "--mcp", "--uninstall")
    assert proc.returncode == 0, out(proc)
    assert f"removed {n} git-gasp hook(s)" in out(proc)
    assert settings.read_bytes() == MINE


@pytest.mark.slow  # drives the CLI several times
def test_gemini_user_scope_and_a_broken_file(tmp_path):
    repo = tmp_path / "app"
    repo.mkdir()
    proc = gasp(repo, "adapt", "gemini", "install", "--scope", "user")
    assert proc.returncode == 0, out(proc)
    user = Path.home() / ".gemini" / "settings.json"
    assert set(json.loads(user.read_text())["hooks"]) == set(DIALECTS["gemini"].events)
    assert not (repo / ".gemini").exists()
    (repo / ".gemini").mkdir()
    broken = repo / ".gemini" / "settings.json"
    broken.write_bytes(b'{"hooks": [')
    proc = gasp(repo, "adapt", "gemini", "install")
    assert proc.returncode != 0 and out(proc).startswith("git gasp: error: ")
    assert "Traceback" not in out(proc) and broken.read_bytes() == b'{"hooks": ['


@pytest.mark.slow  # drives the CLI several times
def test_gemini_prime_writes_gemini_md(tmp_path):
    assert gasp(tmp_path, "init", "bot").returncode == 0
    repo = tmp_path / "bot"
    proc = gasp(repo, "adapt", "gemini", "prime")
    assert proc.returncode == 0, out(proc)
    text = (repo / "GEMINI.md").read_text()
    assert "<!-- gasp:begin -->" in text and "<!-- gasp:end -->" in text
    assert "adapt gemini" in text


@pytest.mark.slow  # drives the CLI several times
def test_doctor_checks_the_agents_hook_settings(tmp_path):
    assert gasp(tmp_path, "init", "bot").returncode == 0
    repo = tmp_path / "bot"
    assert gasp(repo, "adapt", "gemini", "install").returncode == 0
    proc = gasp(repo, "doctor", "--json")
    found = [f for f in json.loads(proc.stdout) if f["topic"] == "agent-hooks"]
    assert [f["level"] for f in found] == ["ok"], found
    assert "Gemini CLI runs git-gasp's hook for 8 events" in found[0]["what"]
    settings = repo / ".gemini" / "settings.json"
    data = json.loads(settings.read_text())
    del data["hooks"]["AfterTool"]
    data["hooksConfig"] = {"enabled": False}
    settings.write_text(json.dumps(data))
    proc = gasp(repo, "doctor", "--json")
    assert proc.returncode == 1
    found = {f["level"]: f for f in json.loads(proc.stdout) if f["topic"] == "agent-hooks"}
    assert "hooksConfig.enabled is false" in found["error"]["what"]
    assert found["warn"]["what"].endswith("not run for AfterTool")
    settings.write_text("{")
    proc = gasp(repo, "doctor")
    assert proc.returncode == 1 and "Gemini CLI runs none of its hooks" in out(proc)
