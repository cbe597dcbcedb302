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
``usageMetadata``: the model calls (`parse_transcript`), recorded at Stop and when
the run closes (``session_close.record_model_turns``).
"""

from __future__ import annotations

import os
import re
from typing import Any

from git_gasp.adapters.dialects.gemini import tool_result
from git_gasp.adapters.records import (
    ASSISTANT_TEXT,
    MODEL_RESPONSE,
    Record,
    SessionInfo,
    Transcript,
    iter_json_lines,
    parse_ts,
    read_raw,
    redact_names,
)

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


def parse_transcript(data: bytes) -> Transcript:
    """The model responses of a transcript, oldest first, as records: one
    ``model_response`` per ``assistant`` line (key: the line's uuid; ``model``,
    ``usage``, ``stop_reason`` ``tool_calls`` when it called a tool, else ``stop``) and
    the ``assistant_text`` of what it wrote (for ``SessionWriter.model_call``)."""
    t = Transcript(SessionInfo(agent=AGENT))
    for n, obj in iter_json_lines(data):
        t.line_count = n
        if not (isinstance(obj, dict) and obj.get("type") == "assistant"
                and isinstance(obj.get("uuid"), str) and isinstance(obj.get("model"), str)):
            continue
        message = obj.get("message") if isinstance(obj.get("message"), dict) else {}
        parts = message.get("parts") if isinstance(message.get("parts"), list) else []
        usage = obj.get("usageMetadata")
        calls = any(isinstance(p, dict) and "functionCall" in p for p in parts)
        key, ts = obj["uuid"], parse_ts(obj.get("timestamp"))
        t.records.append(Record(MODEL_RESPONSE, key, None, ts, {
            "message_id": key, "model": obj["model"],
            "usage": usage if isinstance(usage, dict) else None,
            "stop_reason": "tool_calls" if calls else "stop"}, n))
        t.records.append(Record(ASSISTANT_TEXT, f"text:{key}", key, ts,
                                {"text": _text(parts), "message_id": key}, n))
    return redact_names(t)


def read_transcript(path: str | os.PathLike) -> Transcript:
    """Read a Qwen Code transcript file (its model responses: `parse_transcript`)."""
    return parse_transcript(read_raw(path))


def turn_finished(data: bytes) -> bool:
    """True when the transcript's last model response asked for no tool (the turn ended)."""
    calls = parse_transcript(data).by_kind(MODEL_RESPONSE)
    return bool(calls) and calls[-1].get("stop_reason") == "stop"
