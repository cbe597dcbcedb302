"""`adapt claude-code|codex install --mcp` writes the portable entry (merged, never
clobbering) and `doctor` reports a broken one."""

from __future__ import annotations

import json
import os

import pytest

from git_gasp.base.toml import tomllib
from tests.testing.run import gasp, out

pytestmark = pytest.mark.slow  # installs and a server per test

ENTRY = {"type": "stdio", "command": "git", "args": ["gasp", "mcp"]}


def _toml(path):
    return tomllib.loads(path.read_text())


def test_claude_install_merges_into_mcp_json(agent):
    mine = '{\n    "mcpServers": {\n        "docs": {"command": "npx", "args": ["docs"]}\n' \
           '    },\n    "other": [1, 2]\n}\n'
    (agent / ".mcp.json").write_text(mine)
    proc = gasp(agent, "adapt", "claude-code", "install", "--mcp")
    assert proc.returncode == 0, out(proc)
    assert "registered the gasp MCP server" in out(proc)
    data = json.loads((agent / ".mcp.json").read_text())
    assert data["mcpServers"] == {"docs": {"command": "npx", "args": ["docs"]}, "gasp": ENTRY}
    assert data["other"] == [1, 2]
    assert (agent / ".mcp.json").read_text().startswith('{\n    "mcpServers": {\n        "docs"')
    again = gasp(agent, "adapt", "claude-code", "install", "--mcp")
    assert "already registered" in out(again)
    gone = gasp(agent, "adapt", "claude-code", "install", "--uninstall", "--mcp")
    assert gone.returncode == 0, out(gone)
    assert (agent / ".mcp.json").read_text() == mine  # back byte for byte


def test_claude_install_fresh_and_refusals(agent):
    assert gasp(agent, "adapt", "claude-code", "install", "--mcp").returncode == 0
    assert json.loads((agent / ".mcp.json").read_text()) == {"mcpServers": {"gasp": ENTRY}}
    (agent / ".mcp.json").write_text('{"mcpServers": {"gasp": {"command": "other"}}}')
    proc = gasp(agent, "adapt", "claude-code", "install", "--mcp")
    assert proc.returncode == 1 and "not git-gasp's" in out(proc)
    (agent / ".mcp.json").write_text("{broken")
    proc = gasp(agent, "adapt", "claude-code", "install", "--mcp")
    assert proc.returncode == 1 and "is not valid JSON" in out(proc)
    assert (agent / ".mcp.json").read_text() == "{broken"


def test_codex_install_writes_mcp_servers_as_toml(agent):
    config = agent / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('# mine\nmodel = "x"\n\n[mcp_servers.docs]\ncommand = "npx"\n')
    proc = gasp(agent, "adapt", "codex", "install", "--mcp")
    assert proc.returncode == 0, out(proc)
    assert "comments were not kept" in out(proc)
    data = _toml(config)
    assert data["model"] == "x"
    assert data["mcp_servers"] == {"docs": {"command": "npx"},
                                   "gasp": {"command": "git", "args": ["gasp", "mcp"]}}
    proc = gasp(agent, "adapt", "codex", "install", "--uninstall", "--mcp")
    assert proc.returncode == 0, out(proc)
    assert _toml(config)["mcp_servers"] == {"docs": {"command": "npx"}}
    config.write_text("[mcp_servers\n")
    proc = gasp(agent, "adapt", "codex", "install", "--mcp")
    assert proc.returncode == 1 and "is not valid TOML" in out(proc)


def _mcp_findings(agent, env=None) -> list[dict]:
    import subprocess

    proc = subprocess.run(["git", "gasp", "doctor", "--json"], cwd=agent,
                          capture_output=True, env=env)
    return [f for f in json.loads(proc.stdout) if f["topic"] == "mcp"]


def test_doctor_reports_a_broken_entry(agent):
    assert _mcp_findings(agent) == []  # not wired: nothing to say
    assert gasp(agent, "adapt", "claude-code", "install", "--mcp").returncode == 0
    assert gasp(agent, "adapt", "codex", "install", "--mcp").returncode == 0
    assert [f["level"] for f in _mcp_findings(agent)] == ["ok", "ok"]
    (agent / ".mcp.json").write_text('{"mcpServers": ')
    (bad, good) = _mcp_findings(agent)
    assert bad["level"] == "error" and "not valid JSON" in bad["what"]
    assert bad["path"].endswith(".mcp.json") and good["level"] == "ok"
    assert gasp(agent, "doctor").returncode == 1
    (agent / ".mcp.json").write_text(json.dumps({"mcpServers": {"gasp": ENTRY}}))
    import shutil
    import subprocess

    env = dict(os.environ, PATH=os.path.dirname(shutil.which("git")))  # no git-gasp on it
    gasp_exe = shutil.which("git-gasp")

    proc = subprocess.run([gasp_exe, "doctor", "--json"], cwd=agent, capture_output=True,
                          env=env)
    found = [f for f in json.loads(proc.stdout) if f["topic"] == "mcp"]
    assert [f["level"] for f in found] == ["error", "error"]
    assert "git-gasp is not on PATH" in found[0]["what"]
