"""One request and its response as the recorder reads them, beside the relay.

An :class:`Exchange` holds a bounded copy of the request body and reads the response's
bytes as the relay passes them on (``feed``): a stream event by event through
``sse.SSEParser``, a whole body kept up to `BODY_MAX` bytes. Nothing here can fail the
relay: what cannot be read is kept as `problems`, recorded as a failure observation.
"""

from __future__ import annotations

import json
import time
import zlib
from collections.abc import Callable
from typing import Any

from git_gasp.proxy import anthropic, gemini, openai
from git_gasp.proxy.dialect import ANTHROPIC, CHAT, GEMINI, RESPONSES, Asked, Reply
from git_gasp.proxy.sse import SSEParser

BODY_MAX = 32 << 20  # bytes of a request or whole response kept for reading (not relayed)

_ASKED: dict[str, Callable[[dict, str], Asked]] = {
    ANTHROPIC: anthropic.asked, CHAT: openai.chat_asked, RESPONSES: openai.responses_asked,
    GEMINI: gemini.asked}
_WHOLE: dict[str, Callable[[Reply, Any], None]] = {
    ANTHROPIC: anthropic.whole, CHAT: openai.chat_whole, RESPONSES: openai.responses_whole,
    GEMINI: gemini.whole}
_EVENT: dict[str, Callable[[Reply, str | None, Any], None]] = {
    ANTHROPIC: anthropic.event, CHAT: openai.chat_event, RESPONSES: openai.responses_event,
    GEMINI: gemini.event}


class Exchange:
    """A model call passing through the proxy: its request read, its response fed."""

    def __init__(self, api: str, method: str, path: str, session: str | None,
                 body: bytes) -> None:
        self.api, self.method, self.path, self.session = api, method, path, session
        self.session_id: str | None = None  # the recorder's, once it took the call in
        self.started = time.time()
        self.t0 = time.monotonic()
        self.problems: list[str] = []
        self.asked = Asked()
        self.reply = Reply()
        self.status: int | None = None
        self.streamed = False
        self.outcome = "pending"  # completed | aborted | failed (upstream unreachable)
        self.duration_ms: int | None = None
        self.body_size = len(body)
        self._body = b""
        self._kept = 0
        self._sse: SSEParser | None = None
        self._inflate: Any = None
        if len(body) > BODY_MAX:
            self.problems.append(f"request body of {len(body)} bytes is past the "
                                 f"{BODY_MAX} read for recording")
            return
        try:
            doc = json.loads(body)
        except (ValueError, RecursionError):  # not JSON, a huge number, deep nesting
            self.problems.append(f"request body is not JSON ({len(body)} bytes)")
            return
        if not isinstance(doc, dict):
            self.problems.append("request body is not a JSON object")
            return
        try:
            self.asked = _ASKED[api](doc, path)
        except Exception as exc:  # noqa: BLE001 - an odd shape must not fail the relay
            self.problems.append(f"request not understood: {type(exc).__name__}: {exc}")
        self.reply.turn = self.asked.turn

    def respond(self, status: int, content_type: str, encoding: str) -> None:
        """The response's status and headers have come."""
        self.status = status
        self.streamed = "text/event-stream" in content_type.lower()
        enc = encoding.strip().lower()
        if enc in ("gzip", "x-gzip"):
            self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif enc == "deflate":
            self._inflate = zlib.decompressobj()
        elif enc not in ("", "identity"):
            self.problems.append(f"response encoded as {enc}: not read")
            self._kept = -1
        if self.streamed and self._kept == 0:
            self._sse = SSEParser()

    def feed(self, chunk: bytes) -> None:
        """Bytes of the response, as relayed."""
        if self._kept < 0:
            return
        try:
            if self._inflate is not None:
                chunk = self._inflate.decompress(chunk, BODY_MAX)
            if self._sse is not None:
                for name, data in self._sse.feed(chunk):
                    self._event(name, data)
            elif self._kept + len(chunk) > BODY_MAX:
                self.problems.append(f"response body past the {BODY_MAX} bytes read for "
                                     "recording")
                self._kept, self._body = -1, b""
            else:
                self._body += chunk
                self._kept += len(chunk)
        except Exception as exc:  # noqa: BLE001 - never fail the relay
            self.problems.append(f"response not readable: {type(exc).__name__}: {exc}")
            self._kept = -1

    def _event(self, name: str | None, data: str) -> None:
        if data.strip() == "[DONE]":
            _EVENT[self.api](self.reply, name, "[DONE]")
            return
        try:
            doc = json.loads(data)
        except (ValueError, RecursionError):  # not JSON, a huge number, deep nesting
            self.problems.append(f"stream event {name or 'data'} is not JSON")
            return
        _EVENT[self.api](self.reply, name, doc)

    def finish(self, outcome: str) -> None:
        """The response ended: `outcome` completed, aborted (the client left) or failed."""
        self.outcome = outcome
        self.duration_ms = int((time.monotonic() - self.t0) * 1000)
        if self._kept < 0:
            return
        try:
            if self._sse is not None:
                for name, data in self._sse.close():
                    self._event(name, data)
                if self._sse.overflowed:
                    self.problems.append(f"{self._sse.overflowed} stream line(s) too long "
                                         "to read")
            elif self._body and outcome == "completed":
                try:
                    doc = json.loads(self._body)
                except (ValueError, RecursionError):  # not JSON, or deep nesting
                    self.problems.append(f"response body is not JSON ({self._kept} bytes)")
                    return
                _WHOLE[self.api](self.reply, doc)
        except Exception as exc:  # noqa: BLE001 - never fail the relay
            self.problems.append(f"response not understood: {type(exc).__name__}: {exc}")
        finally:
            self.reply.finish_calls()
            self._body = b""
