"""The OpenAI Chat Completions (``/chat/completions``) and Responses (``/responses``)
APIs, streaming and not."""

from __future__ import annotations

from typing import Any

from git_gasp.adapters.records import output_text
from git_gasp.proxy.dialect import (
    Asked,
    Reply,
    ToolCall,
    ToolResult,
    last_turn,
    parse_json_text,
)


def _model(body: dict) -> str | None:
    return body.get("model") if isinstance(body.get("model"), str) else None


def _error_text(err: Any) -> str:
    return str(err.get("message") if isinstance(err, dict) else err)


def _chat_call(c: dict) -> ToolCall:
    """A Chat Completions ``tool_calls`` entry as a tool call."""
    fn = c.get("function") if isinstance(c.get("function"), dict) else {}
    return ToolCall(str(c.get("id")), str(fn.get("name") or "unknown"),
                    parse_json_text(fn.get("arguments")))


def _function_call(item: dict) -> ToolCall:
    """A Responses ``function_call`` item as a tool call."""
    return ToolCall(str(item.get("call_id")), str(item.get("name") or "unknown"),
                    parse_json_text(item.get("arguments")))


# --- Chat Completions -------------------------------------------------------------------
def chat_asked(body: dict, path: str) -> Asked:
    """The model, stream flag, new user text, last turn's tool calls and their results."""
    a = Asked(model=_model(body), stream=body.get("stream") is True)
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    for m in messages[last_turn(messages, lambda m: m.get("role") == "assistant"):]:
        if m.get("role") == "assistant":
            a.calls += [_chat_call(c) for c in m.get("tool_calls") or [] if isinstance(c, dict)]
        elif m.get("role") == "tool":
            a.results.append(ToolResult(str(m.get("tool_call_id")), output_text(m.get("content"))))
    if messages and messages[-1].get("role") == "user":
        a.prompt = output_text(messages[-1].get("content")) or None
    return a


def chat_whole(r: Reply, body: Any) -> None:
    """A non-streamed chat completion."""
    if not isinstance(body, dict):
        return
    if body.get("error"):
        r.error = _error_text(body["error"])
        return
    r.model = body.get("model") or r.model
    r.add_usage(body.get("usage"))
    for choice in body.get("choices") or []:
        if not isinstance(choice, dict):
            continue
        r.stop_reason = choice.get("finish_reason") or r.stop_reason
        msg = choice.get("message") or {}
        if isinstance(msg.get("content"), str):
            r.text.append(msg["content"])
        r.calls += [_chat_call(c) for c in msg.get("tool_calls") or [] if isinstance(c, dict)]


def chat_event(r: Reply, name: str | None, data: Any) -> None:
    """One chunk of a streamed chat completion (``data: [DONE]`` ends it)."""
    if data == "[DONE]":
        r.finish_calls()
        return
    if not isinstance(data, dict):
        return
    if data.get("error"):
        chat_whole(r, data)
        return
    r.model = data.get("model") or r.model
    r.add_usage(data.get("usage"))
    for choice in data.get("choices") or []:
        if not isinstance(choice, dict):
            continue
        r.stop_reason = choice.get("finish_reason") or r.stop_reason
        delta = choice.get("delta") or {}
        if isinstance(delta.get("content"), str):
            r.text.append(delta["content"])
        for c in delta.get("tool_calls") or []:
            if not isinstance(c, dict):
                continue
            index, fn = c.get("index", 0), c.get("function") or {}
            if index not in r.partial:
                r.start_call(index, c.get("id"), fn.get("name"))
            r.add_input(index, fn.get("arguments"))


# --- Responses --------------------------------------------------------------------------
def _said_by_model(item: dict) -> bool:
    return item.get("type") in ("function_call", "reasoning") or item.get("role") == "assistant"


def responses_asked(body: dict, path: str) -> Asked:
    """The model, stream flag, new user text, last turn's function calls and outputs."""
    a = Asked(model=_model(body), stream=body.get("stream") is True)
    items = body.get("input")
    if isinstance(items, str):
        a.prompt = items
        return a
    items = [i for i in items or [] if isinstance(i, dict)]
    for i in items[last_turn(items, _said_by_model):]:
        if i.get("type") == "function_call":
            a.calls.append(_function_call(i))
        elif i.get("type") == "function_call_output":
            a.results.append(ToolResult(str(i.get("call_id")), output_text(i.get("output"))))
    if items and items[-1].get("role") == "user":
        a.prompt = output_text(items[-1].get("content")) or None
    return a


def responses_whole(r: Reply, body: Any) -> None:
    """A whole response object (non-streamed, or the one ``response.completed`` carries)."""
    if not isinstance(body, dict):
        return
    if body.get("error"):
        r.error = _error_text(body["error"])
    r.model = body.get("model") or r.model
    r.add_usage(body.get("usage"))
    r.stop_reason = body.get("status") or r.stop_reason
    r.text, r.calls, r.partial = [], [], {}
    for item in body.get("output") or []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call":
            r.calls.append(_function_call(item))
        elif item.get("type") == "message":
            r.text.append(output_text(item.get("content")))


def responses_event(r: Reply, name: str | None, data: Any) -> None:
    """One event of a streamed response."""
    if not isinstance(data, dict):
        return
    kind = data.get("type") or name
    if kind in ("response.completed", "response.failed", "response.incomplete"):
        responses_whole(r, data.get("response"))
    elif kind == "response.created":
        r.model = (data.get("response") or {}).get("model") or r.model
    elif kind == "response.output_item.done":
        item = data.get("item") or {}
        if item.get("type") == "function_call":
            r.calls.append(_function_call(item))
        elif item.get("type") == "message":
            r.text.append(output_text(item.get("content")))
    elif kind == "error":
        r.error = str(data.get("message") or data.get("error") or "error")
