"""Cursor: its ``.cursor/hooks.json`` and its payloads, as far as they differ from Claude
Code's.

Cursor's hook file is ``{"version": 1, "hooks": {EVENT: [{"command": …}]}}``: flat
entries, no matcher groups, shared with the person's own hooks. git-gasp's entries are
merged in and taken out as in the other agents' settings (ours: the command is exactly
``git-gasp-hook cursor``; nothing else in the file changes, not even its formatting);
a file git-gasp created and that holds nothing else is removed on uninstall.

Payloads (Cursor's hooks schema, as the ``cursor-hooks`` package types it) carry
``conversation_id`` (the session), ``generation_id`` (one prompt's turn),
``hook_event_name`` and ``workspace_roots``; ``beforeSubmitPrompt``: ``prompt``,
``attachments``; ``afterShellExecution``: ``command``, ``output``, ``cwd``?;
``afterFileEdit``: ``file_path``, ``edits`` (``old_string``/``new_string``);
``afterMCPExecution``: ``tool_name``, ``tool_input``, ``result_json``; ``stop``:
``status`` (completed, aborted, error). No tool call has an id, and no before-hook is
installed: those wait for a permission answer, and the after-hooks record each call
whole.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from git_gasp.adapters.dialects.table import DIALECTS
from git_gasp.adapters.records import output_text
from git_gasp.adapters.wiring.agent_hooks import (
    HOOK_TIMEOUT_S,
    command_agent,
    load_settings,
    write_project_file,
    write_user_file,
)
from git_gasp.adapters.wiring.json_edit import apply_hooks
from git_gasp.base.fileops import remove_file

AGENT = "cursor"
SHELL, EDIT = "Shell", "Edit"  # the tool names its shell and edit events record as


def _first_root(payload: dict) -> str | None:
    roots = payload.get("workspace_roots")
    if isinstance(roots, list) and roots and isinstance(roots[0], str):
        return roots[0]
    return None


def normalize(payload: dict) -> dict:
    """`payload` with the neutral event and the fields the neutral reader takes: the
    conversation as ``session_id``, the first workspace root as ``cwd``, a shell command,
    file edit or MCP call as one finished tool call, a prompt's ``prompt_id`` (its
    generation)."""
    event = payload.get("hook_event_name")
    neutral = DIALECTS[AGENT].events.get(event) if isinstance(event, str) else None
    out = dict(payload, hook_event_name=neutral or event)
    sid = payload.get("session_id") or payload.get("conversation_id")
    if isinstance(sid, str):
        out["session_id"] = sid
    if not isinstance(payload.get("cwd"), str) and _first_root(payload):
        out["cwd"] = _first_root(payload)
    if neutral == "SessionStart" and not isinstance(payload.get("source"), str):
        out["source"] = "startup"  # one conversation starts up once, as Claude's session
    elif neutral == "UserPromptSubmit" and isinstance(payload.get("generation_id"), str):
        out["prompt_id"] = payload["generation_id"]
    elif event == "afterShellExecution":
        out.update(tool_name=SHELL, tool_input={"command": payload.get("command")},
                   tool_response={"stdout": output_text(payload.get("output"))})
        code = payload.get("exit_code")
        if type(code) is int:
            out["tool_response"]["exit_code"] = code
    elif event == "afterFileEdit":
        path = payload.get("file_path")
        out.update(tool_name=EDIT, tool_input={"file_path": path,
                                               "edits": payload.get("edits")},
                   tool_response={"filePath": path} if isinstance(path, str) else "")
    elif event == "afterMCPExecution":
        out["tool_response"] = {"stdout": output_text(payload.get("result_json"))}
    elif neutral == "Stop":
        out["stop_status"] = payload.get("status")
    return out


def _is_ours(entry: Any) -> bool:
    return isinstance(entry, dict) and command_agent(entry.get("command")) == AGENT


def merged(hooks: dict, command: str | None) -> tuple[dict, int]:
    """`hooks` with our entry running `command` in each of our events (None: ours
    removed); an event list only ours filled goes with them. (hooks, ours removed)."""
    want = {"command": command, "timeout": HOOK_TIMEOUT_S} if command else None
    ours = DIALECTS[AGENT].events if want is not None else {}
    out: dict[str, list] = {}
    removed = 0
    for event, entries in hooks.items():
        kept: list = []
        have = False
        for entry in entries:
            if not _is_ours(entry):
                kept.append(entry)
            elif event in ours and not have and entry == want:
                kept.append(entry)
                have = True
            else:
                removed += 1
        if event in ours and not have:
            kept.append(dict(want))
        if kept or not entries:
            out[event] = kept
    for event in ours:
        out.setdefault(event, [dict(want)])
    return out, removed


def _created(hooks: dict) -> str:
    """The text of a hook file git-gasp creates holding `hooks`."""
    return json.dumps({"version": 1, "hooks": hooks}, indent=2) + "\n"


def install(path: Path, command: str | None, *, user_scope: bool = False) -> tuple[bool, int]:
    """Merge (`command`) or take out (None) our entries in Cursor's hook file at `path`;
    (whether it changed, entries of ours removed). A file git-gasp created, unchanged
    since, is removed when ours are taken out."""
    text, data = load_settings(path)
    old = data.get("hooks")
    hooks, removed = merged(old or {}, command)
    if hooks == (old if old is not None else {}):
        return False, removed
    if command is None and not hooks and text == _created(old):
        remove_file(path)
        return True, removed
    new = _created(hooks) if not text.strip() else apply_hooks(text, hooks or None)
    if user_scope:
        write_user_file(path, new.encode("utf-8"))
    else:
        write_project_file(path.parent.parent, Path(path.parent.name, path.name),
                           new.encode("utf-8"))
    return True, removed
