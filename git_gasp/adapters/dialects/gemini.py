"""Gemini CLI's hook payloads → the neutral shape `payloads.parse_hook_payload` reads.

Gemini CLI 0.61.0 (``docs/hooks/reference.md``, and what a live session sent:
``tests/adapters/data/gemini/``) sends ``session_id``, ``transcript_path``, ``cwd``,
``hook_event_name`` and ``timestamp`` with every event, and:

- ``BeforeAgent``: ``prompt``; ``AfterAgent``: ``prompt``, ``prompt_response``;
- ``BeforeTool``: ``tool_name``, ``tool_input`` (no call id); ``AfterTool`` adds
  ``tool_response``: ``{llmContent, returnDisplay, error?}``; a shell command's
  ``returnDisplay`` is its output and ``llmContent`` ends ``Exit Code: N`` when N ≠ 0;
- ``BeforeModel``: ``llm_request`` ``{model, messages, config}``; ``AfterModel`` adds
  ``llm_response`` ``{text, candidates: [{content, finishReason}], usageMetadata}``,
  once per streamed chunk: the chunk with a ``finishReason`` ends the call;
- ``SessionStart``: ``source``; ``SessionEnd``: ``reason``.

Its transcript, ``~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl``, holds one
``"type": "gemini"`` line per model response (written again, same ``id``, once its
``toolCalls`` ran) between ``$set`` lines of metadata (`turn_finished`).
"""

from __future__ import annotations

import re
from typing import Any

from git_gasp.adapters.dialects.table import dialect
from git_gasp.adapters.records import iter_json_lines, output_text

AGENT = "gemini"
_EXIT = re.compile(r"^Exit Code: (\d{1,9})$", re.MULTILINE)


def normalize(payload: dict) -> dict:
    """`payload` with the neutral event name and the fields the neutral reader takes
    (``tool_response`` as ``{stdout, exit_code?, is_error}``, ``last_assistant_message``,
    ``model``, a prompt's ``prompt_id``: its timestamp); the agent's own fields stay
    beside them."""
    event = payload.get("hook_event_name")
    neutral = dialect(AGENT).events.get(event) if isinstance(event, str) else None
    out = dict(payload, hook_event_name=neutral or event)
    if neutral == "UserPromptSubmit" and isinstance(payload.get("timestamp"), str):
        out["prompt_id"] = payload["timestamp"]  # no id of its own: a replay is known by it
    elif neutral == "PostToolUse":
        out["tool_response"] = tool_result(payload.get("tool_response"))
    elif neutral == "Stop":
        out["last_assistant_message"] = payload.get("prompt_response")
    elif neutral in ("ModelRequest", "ModelResponse"):
        request = payload.get("llm_request")
        model = request.get("model") if isinstance(request, dict) else None
        out["model"] = model if isinstance(model, str) else None
    return out


def tool_result(resp: Any) -> dict:
    """``{stdout, exit_code?, is_error}`` of an AfterTool ``tool_response``."""
    if not isinstance(resp, dict):
        return {"stdout": output_text(resp), "is_error": False}
    llm, shown, error = resp.get("llmContent"), resp.get("returnDisplay"), resp.get("error")
    text = shown if isinstance(shown, str) else output_text(llm) if llm is not None else ""
    out: dict[str, Any] = {"stdout": text, "is_error": bool(error)}
    if error:
        message = error.get("message") if isinstance(error, dict) else error
        out["stdout"] = "\n".join(t for t in (text, output_text(message)) if t)
    found = _EXIT.findall(llm) if isinstance(llm, str) else []
    if found:
        out["exit_code"] = int(found[-1])
    return out


def model_response(payload: dict) -> dict | None:
    """What the AfterModel `payload` says of the call when it ends it (a candidate with
    a ``finishReason``): ``{text, stop_reason, usage}``; None for a chunk before."""
    resp = payload.get("llm_response")
    if not isinstance(resp, dict):
        return None
    candidates = resp.get("candidates") if isinstance(resp.get("candidates"), list) else []
    reasons = [c.get("finishReason") for c in candidates
               if isinstance(c, dict) and isinstance(c.get("finishReason"), str)]
    if not reasons:
        return None
    usage = resp.get("usageMetadata")
    text = resp.get("text")
    return {"text": text if isinstance(text, str) else "", "stop_reason": reasons[0],
            "usage": usage if isinstance(usage, dict) else None}


def turn_finished(data: bytes) -> bool:
    """True when the transcript's last model response called no tool (the turn ended)."""
    last: dict | None = None
    for _, obj in iter_json_lines(data):
        if isinstance(obj, dict) and obj.get("type") == "gemini":
            last = obj
    return last is not None and not last.get("toolCalls")
