"""GitHub Copilot CLI: its hook file and its payloads, as far as they differ from Claude
Code's.

Copilot CLI loads every ``.github/hooks/*.json`` of the repository: ``{"version": 1,
"hooks": {EVENT: [{"type": "command", "bash", "timeoutSec"}]}}``, flat entries with no
matcher. git-gasp's is a file of its own, ``.github/hooks/git-gasp.json``, written whole
and removed on uninstall (one that holds anything but our hook is refused). Its events
are configured by their PascalCase names, for which Copilot sends the payloads "VS Code
compatible" (GitHub's CLI hooks reference): snake_case, ``hook_event_name``,
``session_id``, ``cwd``, ``timestamp`` (ISO), Claude Code's event names; a tool result
is ``tool_result: {result_type, text_result_for_llm}``; tools are ``bash``, ``create``,
``edit``, ``view``…; no tool call id and no prompt id (a prompt is known by its
timestamp). Tested by replaying payloads written from that reference: Copilot CLI needs
a GitHub sign-in, so no live session runs here.
"""

from __future__ import annotations

import json
from pathlib import Path

from git_gasp.adapters.dialects.table import DIALECTS
from git_gasp.adapters.wiring.agent_hooks import HOOK_TIMEOUT_S, command_agent, put_own_file
from git_gasp.base.agentfiles import read_settings
from git_gasp.base.errors import FormatError, GaspError

AGENT = "copilot"


def normalize(payload: dict) -> dict:
    """`payload` with the fields the neutral reader takes: a PostToolUse's result as
    ``tool_response: {stdout, is_error}``, a prompt's ``prompt_id`` (its timestamp), a new
    session's start as ``startup``."""
    event = payload.get("hook_event_name")
    result = payload.get("tool_result")
    if event == "PostToolUse" and isinstance(result, dict):
        text = result.get("text_result_for_llm")
        return dict(payload, tool_response={
            "stdout": text if isinstance(text, str) else "",
            "is_error": result.get("result_type") not in (None, "success")})
    if event == "SessionStart" and payload.get("source") == "new":
        return dict(payload, source="startup")  # a new session starts up once, as Claude's
    if event == "UserPromptSubmit" and isinstance(payload.get("timestamp"), str):
        return dict(payload, prompt_id=payload["timestamp"])
    return payload


def hook_file(command: str) -> dict:
    """The whole of git-gasp's hook file running `command` for every event."""
    entry = {"type": "command", "bash": command, "timeoutSec": HOOK_TIMEOUT_S}
    return {"version": 1, "hooks": {event: [dict(entry)] for event in DIALECTS[AGENT].events}}


def _ours_only(data: dict) -> bool:
    hooks = data.get("hooks")
    return isinstance(hooks, dict) and all(
        isinstance(entries, list) and all(
            isinstance(e, dict) and command_agent(e.get("bash")) == AGENT for e in entries)
        for entries in hooks.values())


def install(repo: Path, command: str | None) -> tuple[Path, bool]:
    """Write (`command`) or remove (None) git-gasp's hook file in `repo`; (path, whether
    it changed). A file there holding anything but our hook is refused, untouched."""
    rel = DIALECTS[AGENT].settings["project"]
    path = repo / rel
    try:
        text, data = read_settings(path)
    except FormatError as exc:
        raise GaspError(f"{exc}; it was left untouched") from None
    if text.strip() and not _ours_only(data):
        raise GaspError(f"{path} holds hooks that are not git-gasp's; it was left untouched "
                        "(git-gasp's own file is this one: move yours to another name)")
    new = None if command is None else json.dumps(hook_file(command), indent=2) + "\n"
    return put_own_file(repo, rel, text, new)

