"""A scripted model upstream (an aiohttp server) and the proxy in front of it, for the
proxy's tests and bench/bench_proxy.py.

`Upstream` answers every request with what its `reply` function returns: a status, the
headers and the body as a list of chunks, written one by one (with `gap` seconds
between them, or waiting on `gate` before each chunk after the first), and keeps every
request it got (method, path with query, headers, body).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from aiohttp import web

from git_gasp.proxy.server import Proxy

Reply = tuple[int, dict[str, str], list[bytes]]


def sse(event: str | None, data: Any) -> bytes:
    head = f"event: {event}\n" if event else ""
    body = data if isinstance(data, str) else json.dumps(data)
    return f"{head}data: {body}\n\n".encode()


SSE_HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
JSON_HEADERS = {"Content-Type": "application/json"}


# --- canned answers of each API ------------------------------------------------------------
def anthropic_stream(model: str = "claude-test", tool: tuple[str, str, dict] | None = None,
                     text: str = "Hello there.") -> list[bytes]:
    """A Messages stream: text, then a tool_use (id, name, input) when `tool`."""
    start = {"id": "msg_1", "type": "message", "role": "assistant", "model": model,
             "content": [], "stop_reason": None,
             "usage": {"input_tokens": 12, "output_tokens": 1}}
    out = [sse("message_start", {"type": "message_start", "message": start}),
           b": keep-alive comment\n\n",
           sse("content_block_start", {"type": "content_block_start", "index": 0,
                                       "content_block": {"type": "text", "text": ""}}),
           sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                       "delta": {"type": "text_delta", "text": text}}),
           sse("content_block_stop", {"type": "content_block_stop", "index": 0})]
    if tool:
        tid, name, inp = tool
        raw = json.dumps(inp)
        out += [sse("content_block_start", {"type": "content_block_start", "index": 1,
                                            "content_block": {"type": "tool_use", "id": tid,
                                                              "name": name, "input": {}}}),
                sse("content_block_delta", {"type": "content_block_delta", "index": 1,
                                            "delta": {"type": "input_json_delta",
                                                      "partial_json": raw[:5]}}),
                sse("content_block_delta", {"type": "content_block_delta", "index": 1,
                                            "delta": {"type": "input_json_delta",
                                                      "partial_json": raw[5:]}}),
                sse("content_block_stop", {"type": "content_block_stop", "index": 1})]
    out += [sse("message_delta", {"type": "message_delta",
                                  "delta": {"stop_reason": "tool_use" if tool else "end_turn"},
                                  "usage": {"output_tokens": 7}}),
            sse("message_stop", {"type": "message_stop"})]
    return out


def anthropic_whole(model: str = "claude-test", text: str = "Hi.") -> list[bytes]:
    return [json.dumps({"id": "msg_2", "type": "message", "role": "assistant", "model": model,
                        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                        "usage": {"input_tokens": 3, "output_tokens": 2}}).encode()]


def chat_stream(model: str = "gpt-test", tool: tuple[str, str, dict] | None = None,
                text: str = "Sure.") -> list[bytes]:
    """A Chat Completions stream (with the usage chunk), a tool call when `tool`."""
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": model}
    out = [sse(None, {**base, "choices": [{"index": 0, "delta": {"role": "assistant",
                                                                  "content": text}}]})]
    if tool:
        tid, name, inp = tool
        raw = json.dumps(inp)
        out += [sse(None, {**base, "choices": [{"index": 0, "delta": {"tool_calls": [
                    {"index": 0, "id": tid, "type": "function",
                     "function": {"name": name, "arguments": raw[:4]}}]}}]}),
                sse(None, {**base, "choices": [{"index": 0, "delta": {"tool_calls": [
                    {"index": 0, "function": {"arguments": raw[4:]}}]}}]})]
    out += [sse(None, {**base, "choices": [{"index": 0, "delta": {},
                                            "finish_reason": "tool_calls" if tool else "stop"}]}),
            sse(None, {**base, "choices": [], "usage": {"prompt_tokens": 20,
                                                        "completion_tokens": 9,
                                                        "total_tokens": 29}}),
            sse(None, "[DONE]")]
    return out


def chat_whole(model: str = "gpt-test", text: str = "Done.") -> list[bytes]:
    return [json.dumps({"id": "chatcmpl-2", "object": "chat.completion", "model": model,
                        "choices": [{"index": 0, "message": {"role": "assistant",
                                                             "content": text},
                                     "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 4, "completion_tokens": 2,
                                  "total_tokens": 6}}).encode()]


def responses_stream(model: str = "gpt-resp", call: tuple[str, str, dict] | None = None
                     ) -> list[bytes]:
    """A Responses stream ending in response.completed (a function call when `call`)."""
    output: list[dict] = [{"type": "message", "role": "assistant", "id": "m1",
                           "content": [{"type": "output_text", "text": "On it."}]}]
    if call:
        cid, name, inp = call
        output.append({"type": "function_call", "call_id": cid, "name": name,
                       "arguments": json.dumps(inp), "id": "fc1"})
    done = {"id": "resp_1", "model": model, "status": "completed", "output": output,
            "usage": {"input_tokens": 30, "output_tokens": 8, "total_tokens": 38}}
    return [sse("response.created", {"type": "response.created",
                                     "response": {"id": "resp_1", "model": model}}),
            *[sse("response.output_item.done", {"type": "response.output_item.done",
                                                "item": item}) for item in output],
            sse("response.completed", {"type": "response.completed", "response": done})]


def gemini_stream(call: tuple[str, dict] | None = None) -> list[bytes]:
    """A streamGenerateContent?alt=sse answer (a functionCall when `call`)."""
    parts: list[dict] = [{"text": "Looking."}]
    out = [sse(None, {"candidates": [{"content": {"role": "model", "parts": parts}}],
                      "usageMetadata": {"promptTokenCount": 11, "totalTokenCount": 12},
                      "modelVersion": "gemini-test"})]
    last: list[dict] = [{"functionCall": {"name": call[0], "args": call[1]}}] if call else \
        [{"text": " Done."}]
    out.append(sse(None, {"candidates": [{"content": {"role": "model", "parts": last},
                                          "finishReason": "STOP"}],
                          "usageMetadata": {"promptTokenCount": 11, "candidatesTokenCount": 6,
                                            "totalTokenCount": 17},
                          "modelVersion": "gemini-test"}))
    return out


# --- the servers ---------------------------------------------------------------------------
class Upstream:
    """The scripted upstream: `reply(method, path, body)` → (status, headers, chunks)."""

    def __init__(self, reply: Callable[[str, str, bytes], Reply], *, gap: float = 0.0,
                 gate: asyncio.Event | None = None) -> None:
        self.reply = reply
        self.gap = gap
        self.gate = gate
        self.requests: list[tuple[str, str, dict, bytes]] = []
        self.runner: web.AppRunner | None = None
        self.port = 0

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        self.requests.append((request.method, request.path_qs, dict(request.headers), body))
        status, headers, chunks = self.reply(request.method, request.path_qs, body)
        resp = web.StreamResponse(status=status, headers=headers)
        if "Content-Length" not in headers and "text/event-stream" not in headers.get(
                "Content-Type", ""):
            resp.content_length = sum(len(c) for c in chunks)
        await resp.prepare(request)
        for n, chunk in enumerate(chunks):
            if n and self.gate is not None:
                await self.gate.wait()
                self.gate.clear()
            elif n and self.gap:
                await asyncio.sleep(self.gap)
            await resp.write(chunk)
        await resp.write_eof()
        return resp

    async def start(self) -> str:
        app = web.Application(client_max_size=1 << 30)
        app.router.add_route("*", "/{tail:.*}", self.handle)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.port = int(self.runner.addresses[0][1])
        return f"http://127.0.0.1:{self.port}"

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()


async def started(upstream: Upstream, on_exchange: Any = None, *, recorder: Any = None,
                  session_header: str = "x-gasp-session") -> tuple[Proxy, str]:
    """Start `upstream` and a proxy whose every API goes to it, each finished call to
    `on_exchange` or to `recorder` (as the command wires it); (proxy, proxy URL)."""
    url = await upstream.start()
    proxy = Proxy({"anthropic": url, "openai": url, "gemini": url},
                  on_exchange=recorder.submit if recorder is not None else on_exchange,
                  on_begin=recorder.begin if recorder is not None else None,
                  session_header=session_header)
    port = await proxy.start("127.0.0.1", 0)
    return proxy, f"http://127.0.0.1:{port}"
