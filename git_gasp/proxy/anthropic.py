"""The Anthropic Messages API (``POST /v1/messages``), streaming and not."""

from __future__ import annotations

from typing import Any

from git_gasp.adapters.records import output_text
from git_gasp.proxy.dialect import Asked, Reply, ToolCall, ToolResult, last_turn


def _blocks(message: Any) -> list:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _assistant(m: dict) -> bool:
    return m.get("role") == "assistant"


def asked(body: dict, path: str) -> Asked:
    """The model, stream flag, new user text, last turn's tool calls and their results."""
    a = Asked(model=body.get("model") if isinstance(body.get("model"), str) else None,
              stream=body.get("stream") is True)
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    for m in messages[last_turn(messages, _assistant):]:
        for b in _blocks(m):
            if m.get("role") == "assistant" and b.get("type") == "tool_use":
                a.calls.append(ToolCall(str(b.get("id")), str(b.get("name") or "unknown"),
                                        b.get("input")))
            elif m.get("role") == "user" and b.get("type") == "tool_result":
                a.results.append(ToolResult(str(b.get("tool_use_id")),
                                            output_text(b.get("content")),
                                            b.get("is_error") is True))
    if messages and messages[-1].get("role") == "user":
        blocks = _blocks(messages[-1])
        texts = [str(b.get("text") or "") for b in blocks if b.get("type") == "text"]
        if texts and not any(b.get("type") == "tool_result" for b in blocks):
            a.prompt = "\n".join(texts)
    return a


def whole(r: Reply, body: Any) -> None:
    """A non-streamed response."""
    if not isinstance(body, dict):
        return
    if body.get("type") == "error":
        r.error = str((body.get("error") or {}).get("message") or body.get("error"))
        return
    r.model = body.get("model") or r.model
    r.add_usage(body.get("usage"))
    r.stop_reason = body.get("stop_reason")
    for b in _blocks(body):
        if b.get("type") == "text":
            r.text.append(str(b.get("text") or ""))
        elif b.get("type") == "tool_use":
            r.calls.append(ToolCall(str(b.get("id")), str(b.get("name") or "unknown"),
                                    b.get("input")))


def event(r: Reply, name: str | None, data: Any) -> None:
    """One server-sent event of a streamed response."""
    if not isinstance(data, dict):
        return
    kind = data.get("type") or name
    if kind == "message_start":
        msg = data.get("message") or {}
        r.model = msg.get("model") or r.model
        r.add_usage(msg.get("usage"))
    elif kind == "content_block_start":
        block = data.get("content_block") or {}
        if block.get("type") == "tool_use":
            r.start_call(data.get("index"), block.get("id"), block.get("name"))
    elif kind == "content_block_delta":
        delta = data.get("delta") or {}
        if delta.get("type") == "text_delta":
            r.text.append(str(delta.get("text") or ""))
        elif delta.get("type") == "input_json_delta":
            r.add_input(data.get("index"), delta.get("partial_json"))
    elif kind == "message_delta":
        r.stop_reason = (data.get("delta") or {}).get("stop_reason") or r.stop_reason
        r.add_usage(data.get("usage"))
    elif kind == "message_stop":
        r.finish_calls()
    elif kind == "error":
        r.error = str((data.get("error") or {}).get("message") or data.get("error"))
