"""What one model API exchange says, in API-neutral form, and which API a request speaks.

Each API's module (``anthropic.py``, ``openai.py`` for Chat Completions and Responses,
``gemini.py``) reads a request body into :class:`Asked` and feeds a response, whole or
event by event, into a :class:`Reply`. The recorder only ever sees these.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

ANTHROPIC, CHAT, RESPONSES, GEMINI = "anthropic", "openai-chat", "openai-responses", "gemini"
INPUT_MAX = 1 << 20  # characters of one tool call's streamed input kept for the record


@dataclass
class ToolCall:
    """A tool call the model asked for (or one a request's history shows)."""

    id: str
    name: str
    input: Any


@dataclass
class ToolResult:
    """A tool's result a request carries back to the model."""

    id: str
    output: str
    is_error: bool = False


@dataclass
class Asked:
    """What a request says: the model, whether it streams, the user's new text (when the
    request ends on one), the tool calls of the model's last turn and the results that
    follow it (the new ones: older results were new in an earlier request)."""

    model: str | None = None
    stream: bool = False
    prompt: str | None = None
    calls: list[ToolCall] = field(default_factory=list)
    results: list[ToolResult] = field(default_factory=list)
    turn: int = 0  # the reply's place in the conversation (names Gemini's id-less calls)


@dataclass
class Reply:
    """What a response says, filled as it arrives: the model, token usage, stop reason,
    text and the tool calls asked for; `error` when the API answered with one."""

    model: str | None = None
    usage: dict | None = None
    stop_reason: str | None = None
    text: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    error: str | None = None
    partial: dict = field(default_factory=dict)  # index -> [id, name, input text]
    turn: int = 0  # Asked.turn of its request

    def add_usage(self, usage: Any) -> None:
        """Merge token counts (a stream reports them in parts)."""
        if isinstance(usage, dict):
            self.usage = {**(self.usage or {}), **{k: v for k, v in usage.items()
                                                   if v is not None}}

    def start_call(self, index: Any, cid: Any, name: Any) -> None:
        self.partial[index] = [str(cid or f"call_{index}"), str(name or "unknown"), ""]

    def add_input(self, index: Any, text: Any) -> None:
        part = self.partial.get(index)
        if part is not None and isinstance(text, str) and len(part[2]) < INPUT_MAX:
            part[2] += text

    def finish_calls(self) -> None:
        """Turn the streamed calls' pieces into tool calls (their input parsed as JSON)."""
        for cid, name, text in self.partial.values():
            self.calls.append(ToolCall(cid, name, parse_json_text(text)))
        self.partial = {}


def last_turn(items: list, is_model: Callable[[dict], bool]) -> int:
    """Where the model's last turn starts in `items` (the last run of items `is_model`
    holds for); 0 when the model has not spoken."""
    end = next((i for i in range(len(items) - 1, -1, -1) if is_model(items[i])), None)
    if end is None:
        return 0
    start = end
    while start > 0 and is_model(items[start - 1]):
        start -= 1
    return start


def parse_json_text(text: Any) -> Any:
    """A tool call's JSON argument text parsed ({} when empty, the text when not JSON)."""
    if not isinstance(text, str):
        return text if text is not None else {}
    if not text.strip():
        return {}
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # not JSON, a huge number, deep nesting
        return text


def api_of(path: str, headers: Any) -> str:
    """Which API a request to `path` with `headers` speaks."""
    low = path.split("?", 1)[0].lower()
    if ":generatecontent" in low or ":streamgeneratecontent" in low or \
            headers.get("x-goog-api-key") is not None or low.startswith("/v1beta"):
        return GEMINI
    if low.rstrip("/").endswith("/responses") or "/responses/" in low:
        return RESPONSES
    if low.rstrip("/").endswith("/chat/completions") or low.endswith("/completions"):
        return CHAT
    if "/messages" in low or headers.get("anthropic-version") is not None or \
            headers.get("x-api-key") is not None:
        return ANTHROPIC
    return CHAT  # /v1/models, /v1/embeddings…: the OpenAI shape is the common one


def is_model_call(api: str, method: str, path: str) -> bool:
    """True for the requests that call the model (recorded); others are only relayed."""
    if method != "POST":
        return False
    low = path.split("?", 1)[0].lower().rstrip("/")
    if api == ANTHROPIC:
        return low.endswith("/messages")
    if api == CHAT:
        return low.endswith("/chat/completions")
    if api == RESPONSES:
        return low.endswith("/responses")
    return ":generatecontent" in low or ":streamgeneratecontent" in low
