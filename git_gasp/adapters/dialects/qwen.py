"""Qwen Code's hook payloads and transcript, as far as they differ from Claude Code's.

Qwen Code 0.24.4 (its ``docs/features/hooks.md``, and a live session:
``tests/adapters/data/qwen-code-0.24.4/``) sends Claude Code's events and fields
(``tool_use_id``, ``prompt_id``) with Gemini CLI's tool results: ``tool_response`` is
``{llmContent, returnDisplay}`` and a failing shell command fires
``PostToolUseFailure`` whose ``error`` text ends ``Exit Code: N``.
``UserPromptSubmit`` fires before every model call of a turn, with the turn's
``prompt_id`` (the prompt itself only on the first); a headless run (``qwen -p``)
sends no ``SessionEnd``. Its transcript, ``~/.qwen/projects/<project>/chats/<session
id>.jsonl``, holds one ``assistant`` line per model response with its ``model`` and
``usageMetadata``: the model calls (`model_calls`), recorded at Stop.
"""

from __future__ import annotations

import re
from typing import Any

from git_gasp.adapters.dialects.gemini import tool_result
from git_gasp.adapters.records import iter_json_lines, parse_ts

AGENT = "qwen-code"
_EXIT = re.compile(r"^Exit Code: (\d{1,9})$", re.MULTILINE)


def normalize(payload: dict) -> dict:
    """`payload` with the fields the neutral reader takes: a PostToolUse's
    ``tool_response`` as ``{stdout, exit_code?, is_error}``, a PostToolUseFailure's
    ``exit_code``."""
    event = payload.get("hook_event_name")
    if event == "PostToolUse":
        return dict(payload, tool_response=tool_result(payload.get("tool_response")))
    error = payload.get("error")
    if event == "PostToolUseFailure" and isinstance(error, str):
        found = _EXIT.findall(error)
        if found:
            return dict(payload, exit_code=int(found[-1]))
    return payload


def _text(parts: Any) -> str:
    return "".join(p["text"] for p in parts if isinstance(p, dict)
                   and isinstance(p.get("text"), str)) if isinstance(parts, list) else ""


def model_calls(data: bytes) -> list[dict]:
    """The model responses of a transcript, oldest first: ``{key, model, at, text,
    usage, tool_calls}`` (`key`: the line's uuid)."""
    out = []
    for _, obj in iter_json_lines(data):
        if not (isinstance(obj, dict) and obj.get("type") == "assistant"
                and isinstance(obj.get("uuid"), str) and isinstance(obj.get("model"), str)):
            continue
        message = obj.get("message") if isinstance(obj.get("message"), dict) else {}
        parts = message.get("parts") if isinstance(message.get("parts"), list) else []
        usage = obj.get("usageMetadata")
        out.append({"key": obj["uuid"], "model": obj["model"],
                    "at": parse_ts(obj.get("timestamp")), "text": _text(parts),
                    "usage": usage if isinstance(usage, dict) else None,
                    "tool_calls": sum(1 for p in parts
                                      if isinstance(p, dict) and "functionCall" in p)})
    return out


def turn_finished(data: bytes) -> bool:
    """True when the transcript's last model response asked for no tool (the turn ended)."""
    calls = model_calls(data)
    return bool(calls) and calls[-1]["tool_calls"] == 0
