"""OpenCode: git-gasp's plugin and the events it sends, as far as they differ from
Claude Code's payloads.

OpenCode has no command hooks; it loads every JS/TS file of ``.opencode/plugins/`` as a
plugin (its plugins docs). git-gasp's is ``.opencode/plugins/git-gasp.js``, written
whole and removed on uninstall (one that is not ours is refused): it runs
``git-gasp-hook opencode`` synchronously, the JSON of one event on its stdin, for

- ``chat.message`` (``sessionID``, ``messageID``, the prompt's ``parts``),
- ``tool.execute.before`` (``tool``, ``sessionID``, ``callID``, ``args``) and
  ``tool.execute.after`` (adds ``title``, ``output``, ``metadata``; the bash tool's
  ``metadata.exit`` is its exit code),
- the bus events ``session.created``, ``session.idle`` and ``session.deleted``
  (``properties.info.id`` or ``properties.sessionID``),
- the bus event ``message.updated`` of a finished assistant message, once per message
  (``message``: its ``info``: ``id``, ``sessionID``, ``modelID``, ``providerID``,
  ``tokens`` ``{input, output, reasoning, cache: {read, write}}``, ``finish``,
  ``time`` ``{created, completed}`` in ms, ``error?``): one model call each
  (`model_message`).

Each is sent as ``{hook_event_name, session_id, cwd, timestamp, …}`` with the event's
own fields beside them; `normalize` reads them into the neutral shape.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from git_gasp.adapters.dialects.table import DIALECTS
from git_gasp.adapters.records import output_text, parse_ts
from git_gasp.adapters.wiring.agent_hooks import (
    command_agent,
    put_own_file,
    write_project_file,
)
from git_gasp.adapters.wiring.json_edit import apply_member
from git_gasp.base.agentfiles import read_settings
from git_gasp.base.errors import FormatError, GaspError
from git_gasp.base.files import read_file

AGENT = "opencode"
MARK = "// git-gasp: written by `git gasp adapt opencode install`; --uninstall removes it."

_PLUGIN = """{mark}
// Sends OpenCode's session, prompt, tool and model events to `{command}` as JSON on stdin.
import {{ spawnSync }} from "node:child_process";

const COMMAND = {argv};

function send(event, sessionID, directory, fields) {{
  if (!sessionID) return;
  const payload = {{ hook_event_name: event, session_id: sessionID, cwd: directory,
                    timestamp: new Date().toISOString(), ...fields }};
  try {{
    spawnSync(COMMAND[0], COMMAND.slice(1), {{ input: JSON.stringify(payload),
      stdio: ["pipe", "ignore", "ignore"], timeout: 60000 }});
  }} catch {{}}
}}

export const GitGasp = async ({{ directory }}) => {{
  const answered = new Set();  // assistant messages sent already: each goes once
  return {{
  "chat.message": async (input, output) => send("chat.message", input.sessionID,
    directory, {{ message_id: input.messageID, parts: output.parts }}),
  "tool.execute.before": async (input, output) => send("tool.execute.before",
    input.sessionID, directory, {{ tool: input.tool, call_id: input.callID,
    args: output.args }}),
  "tool.execute.after": async (input, output) => send("tool.execute.after",
    input.sessionID, directory, {{ tool: input.tool, call_id: input.callID,
    args: input.args, title: output.title, output: output.output,
    metadata: output.metadata }}),
  event: async ({{ event }}) => {{
    const p = event.properties || {{}};
    if (event.type === "message.updated") {{
      const m = p.info || {{}};
      if (m.role !== "assistant" || !m.time || !m.time.completed || answered.has(m.id)) return;
      answered.add(m.id);
      send(event.type, m.sessionID, directory, {{ message: m }});
      return;
    }}
    if (!["session.created", "session.idle", "session.deleted"].includes(event.type)) return;
    send(event.type, p.sessionID || (p.info && p.info.id), directory, {{ properties: p }});
  }},
  }};
}};
"""


def plugin(command: str) -> str:
    """The whole of git-gasp's plugin file running `command` (two words: the program
    and the agent)."""
    return _PLUGIN.format(mark=MARK, command=command, argv=json.dumps(shlex.split(command)))


def _text(parts: Any) -> str:
    if not isinstance(parts, list):
        return ""
    return "".join(p["text"] for p in parts if isinstance(p, dict)
                   and p.get("type", "text") == "text" and isinstance(p.get("text"), str))


def normalize(payload: dict) -> dict:
    """`payload` with the neutral event and fields: a prompt's text and ``prompt_id``
    (its message id), a tool call's name, input, id and ``{stdout, exit_code?}``."""
    event = payload.get("hook_event_name")
    neutral = DIALECTS[AGENT].events.get(event) if isinstance(event, str) else None
    out = dict(payload, hook_event_name=neutral or event)
    if neutral == "UserPromptSubmit":
        out.update(prompt=_text(payload.get("parts")), prompt_id=payload.get("message_id"))
    elif neutral in ("PreToolUse", "PostToolUse"):
        out.update(tool_name=payload.get("tool"), tool_input=payload.get("args"),
                   tool_use_id=payload.get("call_id"))
    if neutral == "PostToolUse":
        response: dict[str, Any] = {"stdout": output_text(payload.get("output"))}
        meta = payload.get("metadata")
        code = meta.get("exit") if isinstance(meta, dict) else None
        if type(code) is int:
            response["exit_code"] = code
        out["tool_response"] = response
    elif neutral == "SessionStart":
        out["source"] = "startup"
    elif neutral == "ModelResponse":
        msg = payload.get("message")
        model = msg.get("modelID") if isinstance(msg, dict) else None
        out["model"] = model if isinstance(model, str) else None
    return out


def model_message(payload: dict) -> dict | None:
    """The model call a ``message.updated`` `payload` reports, when its message is a
    finished assistant message: ``{id, provider, started, ended, usage, stop_reason,
    error}`` (``provider``: OpenCode's ``providerID``, a models.dev provider id as
    ``PROVIDERS``' are; times in ms); None otherwise."""
    msg = payload.get("message")
    if not isinstance(msg, dict) or msg.get("role") != "assistant":
        return None
    mid, times = msg.get("id"), msg.get("time")
    times = times if isinstance(times, dict) else {}
    if not isinstance(mid, str) or not mid or parse_ts(times.get("completed")) is None:
        return None
    provider, finish, tokens = msg.get("providerID"), msg.get("finish"), msg.get("tokens")
    return {"id": mid, "provider": provider if isinstance(provider, str) and provider else None,
            "started": parse_ts(times.get("created")), "ended": parse_ts(times.get("completed")),
            "usage": tokens if isinstance(tokens, dict) else None,
            "stop_reason": finish if isinstance(finish, str) and finish else None,
            "error": _error(msg.get("error"))}


def _error(err: Any) -> str | None:
    """The one line an assistant message's ``error`` (``{name, data: {message}}``) says."""
    if not err:
        return None
    if not isinstance(err, dict):
        return output_text(err) or "failed"
    data = err.get("data")
    said = data.get("message") if isinstance(data, dict) else None
    name = err.get("name") if isinstance(err.get("name"), str) else "error"
    return f"{name}: {said}" if isinstance(said, str) and said else name


def install(repo: Path, command: str | None) -> tuple[Path, bool]:
    """Write (`command`) or remove (None) git-gasp's plugin in `repo`; (path, whether it
    changed). A file there that git-gasp did not write is refused, untouched."""
    rel = DIALECTS[AGENT].settings["project"]
    path = repo / rel
    try:
        text = read_file(path).decode("utf-8", "replace")
    except FileNotFoundError:
        text = ""
    except OSError as exc:
        raise GaspError(f"cannot read {path}: {exc.strerror or exc}") from None
    if text and not ours(text):
        raise GaspError(f"{path} is not git-gasp's plugin; it was left untouched (move "
                        "yours to another name)")
    return put_own_file(repo, rel, text, None if command is None else plugin(command))


def ours(text: str) -> bool:
    """True when `text` is a plugin git-gasp wrote (its first line is our mark)."""
    return text.startswith(MARK + "\n")


def plugin_agent(text: str) -> str | None:
    """The agent the plugin `text` runs the hook for, when it is ours and its command is
    one of ours (doctor checks it)."""
    for line in text.splitlines()[:3]:
        if line.startswith("// Sends OpenCode's") and "`" in line:
            return command_agent(line.split("`")[1])
    return None


CONFIG = "opencode.json"  # the project's config; its MCP servers are its ``mcp`` table
SERVER = "gasp"  # the name every agent's MCP entry of git-gasp has (``wiring/mcp_entries.py``)
MCP_ENTRY = {"type": "local", "command": ["git", "gasp", "mcp"], "enabled": True}


def mcp_plan(repo: Path, uninstall: bool) -> tuple[Path, bytes | None]:
    """``opencode.json``'s path and its new bytes with our ``mcp.gasp`` entry set (or
    removed with `uninstall`; None: nothing changes); one of that name that is not ours,
    or a file that is not JSON, is refused."""
    path = repo / CONFIG
    try:
        text, data = read_settings(path)
    except FormatError as exc:
        raise GaspError(f"{exc}; fix it first, it was left untouched") from None
    servers = data.get("mcp", {})
    if not isinstance(servers, dict):
        raise GaspError(f"{path}: `mcp` is not a table of servers; it was left untouched")
    current = servers.get(SERVER)
    if current is not None and current != MCP_ENTRY:
        raise GaspError(f"{path} has an MCP server named {SERVER!r} that is not git-gasp's; "
                        "it was left untouched (rename that one first)")
    if uninstall:
        if current is None:
            return path, None
        rest = {k: v for k, v in servers.items() if k != SERVER}
        return path, apply_member(text, "mcp", rest or None).encode("utf-8")
    if current is not None:
        return path, None
    return path, apply_member(text, "mcp", {**servers, SERVER: MCP_ENTRY}).encode("utf-8")


def install_mcp(repo: Path, new: bytes | None) -> bool:
    """Write `new` (from `mcp_plan`) as ``opencode.json``; whether it changed."""
    if new is None:
        return False
    write_project_file(repo, CONFIG, new)
    return True
