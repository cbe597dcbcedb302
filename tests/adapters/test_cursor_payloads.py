"""Cursor: its shared ``.cursor/hooks.json`` (our flat entries merged in and taken out,
the file given back byte for byte), payloads written from Cursor's hooks schema read
into the neutral events and recorded through the one path once, the rule `prime`
writes, doctor and --mcp."""

from __future__ import annotations

import json

import pytest

from git_gasp.adapters.dialects import cursor
from git_gasp.adapters.dialects.table import DIALECTS
from git_gasp.adapters.payloads import detect_agent, parse_hook_payload
from tests.adapters.samples import DATA, read_jsonl, replays_once
from tests.testing.run import gasp, git, out

CURSOR_HOOKS = DATA / "cursor-docs" / "hook-payloads.jsonl"
MINE = (b'{\n    "version": 1,\n    "hooks": {\n        "beforeShellExecution": '
        b'[{"command": "./guard.sh"}],\n        "stop": [{"command": "./notify.sh"}]\n'
        b'    }\n}\n')


def test_each_event_reads_as_one_finished_tool_call_or_its_neutral_event():
    rows = read_jsonl(CURSOR_HOOKS)
    assert detect_agent(rows[0]) == "cursor"
    hooks = [parse_hook_payload(row, "cursor") for row in rows]
    assert [h.event for h in hooks] == [
        "SessionStart", "UserPromptSubmit", *["PostToolUse"] * 6, "Stop", "SessionEnd"]
    assert {h.session_id for h in hooks} == {rows[0]["conversation_id"]}
    assert hooks[0].cwd == "/home/dev/app" and hooks[1].raw["prompt_id"] == "g-1"
    assert hooks[1].prompt.startswith("Fix the add function")
    edit, shell = hooks[2], hooks[4]
    assert (edit.tool_name, edit.output) == ("Edit", "updated /home/dev/app/calc.py")
    assert edit.tool_input["file_path"] == "/home/dev/app/calc.py"
    assert shell.tool_name == "Shell" and shell.tool_input == {"command": rows[4]["command"]}
    assert "1 failed" in shell.output and shell.is_error is False
    coded = parse_hook_payload(dict(rows[4], exit_code=1), "cursor")
    assert (coded.exit_code, coded.is_error) == (1, True)
    mcp = parse_hook_payload(dict(rows[4], hook_event_name="afterMCPExecution",
                                  tool_name="search", tool_input={"q": "x"},
                                  result_json={"hits": 2}), "cursor")
    assert (mcp.tool_name, mcp.output) == ("search", '{"hits": 2}')


@pytest.mark.slow  # over half a second: out of the fast loop
def test_install_merges_and_uninstall_gives_the_file_back(tmp_path):
    repo = tmp_path / "app"
    path = repo / ".cursor" / "hooks.json"
    path.parent.mkdir(parents=True)
    git(repo, "init", "-q")
    path.write_bytes(MINE)
    proc = gasp(repo, "adapt", "cursor", "install", "--mcp")
    assert proc.returncode == 0, out(proc)
    assert "installed git-gasp hooks for 7 events" in out(proc)
    data = json.loads(path.read_bytes())
    assert data["version"] == 1 and set(data["hooks"]) >= set(DIALECTS["cursor"].events)
    assert data["hooks"]["stop"] == [{"command": "./notify.sh"},
                                     {"command": "git-gasp-hook cursor", "timeout": 60}]
    assert data["hooks"]["beforeShellExecution"] == [{"command": "./guard.sh"}]
    mcp = json.loads((repo / ".cursor" / "mcp.json").read_text())
    assert mcp["mcpServers"]["gasp"] == {"command": "git", "args": ["gasp", "mcp"]}
    installed = path.read_bytes()
    again = gasp(repo, "adapt", "cursor", "install")
    assert "nothing changed" in out(again) and path.read_bytes() == installed
    proc = gasp(repo, "adapt", "cursor", "install", "--uninstall", "--mcp")
    assert proc.returncode == 0 and "removed 7 git-gasp hook(s)" in out(proc)
    assert path.read_bytes() == MINE
    assert "gasp" not in json.loads((repo / ".cursor" / "mcp.json").read_text()).get(
        "mcpServers", {})


def test_a_file_git_gasp_made_goes_and_a_broken_one_is_refused(tmp_path):
    repo = tmp_path / "app"
    repo.mkdir()
    git(repo, "init", "-q")
    path = repo / ".cursor" / "hooks.json"
    assert cursor.install(path, "git-gasp-hook cursor") == (True, 0)
    assert json.loads(path.read_text())["version"] == 1
    assert cursor.install(path, "git-gasp-hook cursor") == (False, 0)
    assert cursor.install(path, None) == (True, 7) and not path.exists()
    assert cursor.install(path, None) == (False, 0)
    path.write_bytes(b'{"hooks": [')
    proc = gasp(repo, "adapt", "cursor", "install")
    assert proc.returncode == 1 and out(proc).startswith("git gasp: error: ")
    assert path.read_bytes() == b'{"hooks": ['


@pytest.mark.slow  # drives the CLI several times
def test_prime_writes_a_rule_cursor_always_applies_and_doctor_checks(tmp_path):
    assert gasp(tmp_path, "init", "bot").returncode == 0
    repo = tmp_path / "bot"
    proc = gasp(repo, "adapt", "cursor", "prime")
    assert proc.returncode == 0, out(proc)
    rule = (repo / ".cursor" / "rules" / "git-gasp.mdc").read_text()
    assert rule.startswith("---\n") and "alwaysApply: true\n---\n" in rule
    assert "<!-- gasp:begin -->" in rule and "adapt cursor" in rule
    assert out(gasp(repo, "adapt", "cursor", "prime")).startswith("up to date:")
    assert gasp(repo, "adapt", "cursor", "install").returncode == 0
    found = [f for f in json.loads(gasp(repo, "doctor", "--json").stdout)
             if f["topic"] == "agent-hooks"]
    assert [f["level"] for f in found] == ["ok"], found
    assert "Cursor runs git-gasp's hook for 7 events" in found[0]["what"]
    hooks = repo / ".cursor" / "hooks.json"
    data = json.loads(hooks.read_text())
    del data["hooks"]["afterShellExecution"]
    hooks.write_text(json.dumps(data))
    found = [f for f in json.loads(gasp(repo, "doctor", "--json").stdout)
             if f["topic"] == "agent-hooks"]
    assert found[0]["what"].endswith("not run for afterShellExecution")


@pytest.mark.slow
def test_the_session_replays_into_a_conformant_run_once(agent):
    rows = [dict(r, workspace_roots=[str(agent)]) for r in read_jsonl(CURSOR_HOOKS)]
    assert replays_once(agent, "cursor", rows) == [
        "Edit", "Edit", "Shell", "Edit", "Shell", "Shell"]
