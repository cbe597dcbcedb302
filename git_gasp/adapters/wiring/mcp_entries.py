"""Wiring the MCP server into the agents (`doctor.mcp_entries` checks that wiring).

Claude Code reads a project's MCP servers from ``<project>/.mcp.json``
(``{"mcpServers": {NAME: {"type": "stdio", "command", "args"}}}``); Codex from
``[mcp_servers.NAME]`` of ``<project>/.codex/config.toml`` (a trusted project's; the
user's ``~/.codex/config.toml`` holds the same tables); Gemini CLI from ``mcpServers`` of
``<project>/.gemini/settings.json`` (``{NAME: {"command", "args"}}``, beside its hooks),
Qwen Code from the same in ``<project>/.qwen/settings.json``.
Ours is named ``gasp`` and runs ``git gasp mcp``, found through the agent's PATH, so the
committed file works on every clone. Installing sets only that entry: every other
server, and for the JSON files every other byte of the file, is kept
(`wiring.json_edit`); a file that is not valid JSON or TOML, or whose server table is
not a table, is refused with one line and left untouched. config.toml is read with
tomllib and written with tomli_w: its data is kept, its comments are not (said when it
had any).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tomli_w

from git_gasp.adapters.wiring.agent_hooks import write_project_file
from git_gasp.adapters.wiring.json_edit import apply_member
from git_gasp.base.agentfiles import read_settings
from git_gasp.base.errors import GaspError

SERVER = "gasp"
COMMAND, ARGS = "git", ["gasp", "mcp"]
MCP_JSON = ".mcp.json"
CODEX_CONFIG = ".codex/config.toml"
GEMINI_SETTINGS = ".gemini/settings.json"  # Gemini CLI: mcpServers beside its hooks
QWEN_SETTINGS = ".qwen/settings.json"  # Qwen Code: the same


def entry(claude: bool) -> dict[str, Any]:
    """Our server entry: ``git gasp mcp`` (Claude Code's also says its transport)."""
    return ({"type": "stdio"} if claude else {}) | {"command": COMMAND, "args": list(ARGS)}


def is_ours(value: Any) -> bool:
    """Whether a server entry runs ``git gasp mcp`` (or ``git-gasp mcp``, by any path)."""
    if not isinstance(value, dict):
        return False
    command, args = value.get("command"), value.get("args", [])
    if command == COMMAND:
        return args == ARGS
    return isinstance(command, str) and Path(command).name == "git-gasp" and args == ["mcp"]


def _servers(path: Path, data: dict[str, Any], key: str) -> dict[str, Any]:
    servers = data.get(key, {})
    if not isinstance(servers, dict):
        raise GaspError(f"{path}: `{key}` is not a table of servers")
    return servers


def _merged(path: Path, servers: dict, want: dict | None) -> dict | None:
    """`servers` with ours set to `want` (None: removed); None when nothing changes."""
    current = servers.get(SERVER)
    if current is not None and not is_ours(current):
        raise GaspError(f"{path} has an MCP server named {SERVER!r} that is not git-gasp's; "
                        "it was left untouched (rename that one first)")
    if want is None:
        if current is None:
            return None
        return {k: v for k, v in servers.items() if k != SERVER}
    if current == want:
        return None
    return {**servers, SERVER: want}


def load(path: Path, key: str) -> tuple[str, dict[str, Any]]:
    """The text and data of the agent's MCP settings file at `path` (`key`: the table of
    servers, checked to be one); a FormatError when it cannot be read as such."""
    text, data = read_settings(path)
    _servers(path, data, key)
    return text, data


def _untouched(path: Path, key: str) -> tuple[str, dict[str, Any]]:
    """`load(path, key)`, its refusal saying the file was left as it is."""
    try:
        return load(path, key)
    except GaspError as exc:
        raise GaspError(f"{exc}; fix it first, it was left untouched") from None


def preflight(repo: Path, claude: bool, uninstall: bool = False) -> None:
    """Read the file `install_claude` / `install_codex` would change and work out what
    they would write, refusing as they would, before anything else of the install is
    written."""
    if claude:
        _claude_plan(repo, uninstall)
    else:
        _codex_plan(repo, uninstall)


def _claude_plan(repo: Path, uninstall: bool, rel: str = MCP_JSON,
                 claude: bool = True) -> tuple[Path, bytes | None]:
    """.mcp.json's path (or `rel`'s, a JSON file with ``mcpServers``) and its new bytes
    (None: nothing changes)."""
    path = repo / rel
    text, data = _untouched(path, "mcpServers")
    servers = _merged(path, _servers(path, data, "mcpServers"),
                      None if uninstall else entry(claude))
    if servers is None or (uninstall and not text.strip()):
        return path, None
    new = apply_member(text, "mcpServers", servers if servers or not uninstall else None)
    return path, new.encode("utf-8")


def install_claude(repo: Path, uninstall: bool = False) -> tuple[Path, bool]:
    """Set (or remove) our entry in `repo`/.mcp.json; (path, whether it changed)."""
    path, new = _claude_plan(repo, uninstall)
    if new is None:
        return path, False
    write_project_file(repo, MCP_JSON, new)
    return path, True


def preflight_settings(repo: Path, rel: str, uninstall: bool = False) -> None:
    """`preflight` for the entry `install_settings` writes."""
    _claude_plan(repo, uninstall, rel, claude=False)


def install_settings(repo: Path, rel: str, uninstall: bool = False) -> tuple[Path, bool]:
    """Set (or remove) our entry in ``mcpServers`` of the agent's JSON settings file
    `repo`/`rel` (Gemini CLI's .gemini/settings.json, Qwen Code's .qwen/settings.json),
    the file's other bytes kept; (path, whether it changed)."""
    path, new = _claude_plan(repo, uninstall, rel, claude=False)
    if new is None:
        return path, False
    write_project_file(repo, rel, new)
    return path, True



def _codex_plan(repo: Path, uninstall: bool) -> tuple[Path, str, bytes | None]:
    """.codex/config.toml's path, text and new bytes (None: nothing changes)."""
    path = repo / CODEX_CONFIG
    text, data = _untouched(path, "mcp_servers")
    servers = _merged(path, _servers(path, data, "mcp_servers"),
                      None if uninstall else entry(False))
    if servers is None:
        return path, text, None
    if servers:
        data["mcp_servers"] = servers
    else:
        data.pop("mcp_servers", None)
    return path, text, tomli_w.dumps(data).encode("utf-8")


def install_codex(repo: Path, uninstall: bool = False) -> tuple[Path, bool, bool]:
    """Set (or remove) ``[mcp_servers.gasp]`` in `repo`/.codex/config.toml;
    (path, whether it changed, whether comments were dropped)."""
    path, text, new = _codex_plan(repo, uninstall)
    if new is None:
        return path, False, False
    write_project_file(repo, CODEX_CONFIG, new)
    comments = any(line.lstrip().startswith("#") for line in text.splitlines())
    return path, True, comments
