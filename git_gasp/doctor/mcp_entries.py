"""`git gasp doctor` on the agents' MCP entries (written by `adapters.wiring.mcp_entries`):
a settings file that does not parse, our entry not running `git gasp mcp`, or one that
would not start (git or git-gasp not on PATH, the mcp SDK not installed)."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

from git_gasp.adapters.wiring.mcp_entries import (
    CODEX_CONFIG,
    COMMAND,
    GEMINI_SETTINGS,
    MCP_JSON,
    QWEN_SETTINGS,
    SERVER,
    is_ours,
    load,
)
from git_gasp.base.errors import GaspError
from git_gasp.doctor.finding import ERROR, OK, Finding

TOPIC = "mcp"


def _command_problem(value: dict) -> str | None:
    """Why our entry would not start, or None."""
    command = value.get("command")
    if not isinstance(command, str) or not command:
        return "names no command"
    if shutil.which(command) is None:
        return f"runs `{command}`, which is not on PATH"
    if command == COMMAND and shutil.which("git-gasp") is None:
        return "runs `git gasp`, but git-gasp is not on PATH (git finds `git gasp` there)"
    if importlib.util.find_spec("mcp") is None:
        return "runs `git gasp mcp`, but the mcp SDK is not installed"
    return None


def _check(path: Path, key: str, agent: str, fix: str) -> list[Finding]:
    where = str(path)
    try:
        if not path.exists():
            return []
        _text, data = load(path, key)
    except GaspError as exc:
        return [Finding(ERROR, f"{exc}: {agent} starts none of its MCP servers", fix=fix,
                        topic=TOPIC, path=where)]
    servers = data.get(key, {})
    value = servers.get(SERVER)
    if value is None:
        return []
    if not is_ours(value):
        return [Finding(ERROR, f"{path}: MCP server {SERVER!r} does not run `git gasp mcp`",
                        fix=fix, topic=TOPIC, path=where)]
    problem = _command_problem(value)
    if problem == "runs `git gasp mcp`, but the mcp SDK is not installed":
        return [Finding(ERROR, f"{path}: MCP server {SERVER!r} {problem}",
                        fix="pip install 'git-gasp[mcp]'", topic=TOPIC, path=where)]
    if problem is not None:
        return [Finding(ERROR, f"{path}: MCP server {SERVER!r} {problem}",
                        fix="put git and git-gasp on the agent's PATH", topic=TOPIC,
                        path=where)]
    return [Finding(OK, f"{path}: MCP server {SERVER!r} runs `git gasp mcp`", topic=TOPIC,
                    path=where)]


def findings(places: list[Path]) -> list[Finding]:
    """Doctor's findings on the MCP entries of the projects at `places` (each checked
    once): a file that does not parse, an entry that would not start."""
    out: list[Finding] = []
    seen: set[Path] = set()
    for place in places:
        real = place.resolve()
        if real in seen:
            continue
        seen.add(real)
        out += _check(place / MCP_JSON, "mcpServers", "Claude Code",
                      "fix the file, then `git gasp adapt claude-code install --mcp`")
        out += _check(place / CODEX_CONFIG, "mcp_servers", "Codex",
                      "fix the file, then `git gasp adapt codex install --mcp`")
        out += _check(place / GEMINI_SETTINGS, "mcpServers", "Gemini CLI",
                      "fix the file, then `git gasp adapt gemini install --mcp`")
        out += _check(place / QWEN_SETTINGS, "mcpServers", "Qwen Code",
                      "fix the file, then `git gasp adapt qwen-code install --mcp`")
    return out
