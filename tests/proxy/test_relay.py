"""The relay: requests reach the upstream unchanged, responses come back unchanged, byte for
byte and as they arrive, streamed or not, whatever the API."""

from __future__ import annotations

import asyncio
import gzip
import json

import aiohttp
import pytest

from tests.proxy.upstream import (
    JSON_HEADERS,
    SSE_HEADERS,
    Upstream,
    anthropic_stream,
    anthropic_whole,
    chat_stream,
    gemini_stream,
    responses_stream,
    started,
)

KEY = "sk-ant-api03-" + "k" * 40


def run(coro):
    return asyncio.run(coro)


async def _fetch(url: str, body: bytes, headers: dict) -> tuple[int, dict, list[bytes]]:
    async with aiohttp.ClientSession(auto_decompress=False) as client:
        async with client.post(url, data=body, headers=headers) as resp:
            chunks = [c async for c in resp.content.iter_any()]
            return resp.status, resp.headers.copy(), chunks


CASES = [
    ("/v1/messages", {"model": "claude-test", "stream": True, "messages": []},
     anthropic_stream(tool=("toolu_1", "Bash", {"command": "ls"})), SSE_HEADERS),
    ("/v1/messages", {"model": "claude-test", "messages": []}, anthropic_whole(), JSON_HEADERS),
    ("/v1/chat/completions", {"model": "gpt-test", "stream": True, "messages": []},
     chat_stream(tool=("call_1", "shell", {"cmd": "ls"})), SSE_HEADERS),
    ("/v1/responses", {"model": "gpt-resp", "stream": True, "input": "hi"},
     responses_stream(call=("call_9", "exec", {"cmd": ["ls"]})), SSE_HEADERS),
    ("/v1beta/models/gemini-test:streamGenerateContent?alt=sse",
     {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
     gemini_stream(call=("run", {"cmd": "ls"})), SSE_HEADERS),
]


@pytest.mark.parametrize(("path", "request_body", "chunks", "headers"), CASES,
                         ids=["anthropic-sse", "anthropic-json", "chat-sse", "responses-sse",
                              "gemini-sse"])
def test_response_bytes_are_the_upstreams(path, request_body, chunks, headers):
    got = []

    async def go():
        up = Upstream(lambda m, p, b: (200, {**headers, "X-Request-Id": "req_7"}, chunks),
                      gap=0.002)
        proxy, url = await started(up, on_exchange=got.append)
        try:
            raw = json.dumps(request_body).encode()
            status, resp_headers, body = await _fetch(url + path, raw, {
                "x-api-key": KEY, "Content-Type": "application/json",
                "anthropic-version": "2023-06-01"})
            return status, resp_headers, body, up.requests
        finally:
            await proxy.stop()
            await up.stop()

    status, resp_headers, body, requests = run(go())
    assert status == 200
    assert b"".join(body) == b"".join(chunks)
    assert resp_headers["X-Request-Id"] == "req_7"
    assert resp_headers["Content-Type"].startswith(headers["Content-Type"])
    (method, upath, uheaders, ubody), = requests
    assert (method, upath, ubody) == ("POST", path, json.dumps(request_body).encode())
    assert uheaders["x-api-key"] == KEY
    assert len(got) == 1 and got[0].outcome == "completed"


def test_request_reaches_upstream_unchanged():
    """Method, path and query, every end-to-end header (the API key too) and the body's
    bytes as they were sent, however odd; nothing added (no User-Agent of the proxy's)."""
    body = b'{"model": "x",  "messages": [] , "odd":"\xc3\xa9"}\n'

    async def go():
        up = Upstream(lambda m, p, b: (200, JSON_HEADERS, [b"{}"]))
        proxy, url = await started(up)
        try:
            async with aiohttp.ClientSession(skip_auto_headers=("User-Agent",)) as client:
                async with client.post(url + "/v1/messages?beta=true", data=body, headers={
                        "Authorization": "Bearer " + KEY, "X-Custom": "a, b",
                        "Content-Type": "application/json; charset=utf-8",
                        "Connection": "keep-alive, X-Drop", "X-Drop": "hop"}) as resp:
                    await resp.read()
            async with aiohttp.ClientSession() as client:
                async with client.get(url + "/v1/models?limit=2") as resp:
                    await resp.read()
            return up.requests
        finally:
            await proxy.stop()
            await up.stop()

    (m1, p1, h1, b1), (m2, p2, _h2, b2) = run(go())
    assert (m1, p1, b1) == ("POST", "/v1/messages?beta=true", body)
    assert h1["Authorization"] == "Bearer " + KEY
    assert h1["X-Custom"] == "a, b"
    assert h1["Content-Type"] == "application/json; charset=utf-8"
    assert "X-Drop" not in h1  # named by Connection: hop-by-hop
    assert "User-Agent" not in h1
    assert (m2, p2, b2) == ("GET", "/v1/models?limit=2", b"")


def test_stream_is_relayed_as_it_arrives():
    """The client has the first event while the upstream still holds the rest back."""
    chunks = anthropic_stream()

    async def go():
        gate = asyncio.Event()
        up = Upstream(lambda m, p, b: (200, SSE_HEADERS, chunks), gate=gate)
        proxy, url = await started(up)
        seen = []
        try:
            async with aiohttp.ClientSession() as client:
                async with client.post(url + "/v1/messages", data=b'{"stream":true}') as resp:
                    while len(b"".join(seen)) < len(b"".join(chunks)):
                        got = await asyncio.wait_for(resp.content.readany(), 5)
                        if not got:
                            break
                        seen.append(got)
                        # nothing past what the upstream let go of has come
                        assert b"".join(chunks).startswith(b"".join(seen))
                        gate.set()
            return seen
        finally:
            await proxy.stop()
            await up.stop()

    seen = run(go())
    assert b"".join(seen) == b"".join(chunks)
    assert len(seen) >= len(chunks) - 1  # one read per upstream write, not all at the end


def test_compressed_response_passes_compressed_and_is_still_read():
    whole = anthropic_whole(text="zipped")[0]
    packed = gzip.compress(whole, mtime=0)
    got = []

    async def go():
        up = Upstream(lambda m, p, b: (200, {**JSON_HEADERS, "Content-Encoding": "gzip"},
                                       [packed[:10], packed[10:]]))
        proxy, url = await started(up, on_exchange=got.append)
        try:
            return await _fetch(url + "/v1/messages", b'{"model":"m","messages":[]}',
                                {"Accept-Encoding": "gzip"})
        finally:
            await proxy.stop()
            await up.stop()

    status, headers, body = run(go())
    assert b"".join(body) == packed
    assert headers["Content-Encoding"] == "gzip"
    assert got[0].reply.text == ["zipped"] and got[0].reply.usage["output_tokens"] == 2


def test_upstream_error_status_and_body_pass_through():
    err = json.dumps({"type": "error", "error": {"type": "overloaded_error",
                                                 "message": "Overloaded"}}).encode()
    got = []

    async def go():
        up = Upstream(lambda m, p, b: (529, {**JSON_HEADERS, "Retry-After": "3"}, [err]))
        proxy, url = await started(up, on_exchange=got.append)
        try:
            return await _fetch(url + "/v1/messages", b'{"model":"m"}', {})
        finally:
            await proxy.stop()
            await up.stop()

    status, headers, body = run(go())
    assert (status, headers["Retry-After"], b"".join(body)) == (529, "3", err)
    assert got[0].status == 529 and got[0].reply.error == "Overloaded"


def test_unreachable_upstream_is_a_502_naming_it():
    got = []

    async def go():
        up = Upstream(lambda m, p, b: (200, JSON_HEADERS, [b"{}"]))
        proxy, url = await started(up, on_exchange=got.append)
        await up.stop()  # nothing listens there any more
        try:
            return await _fetch(url + "/v1/chat/completions", b'{"model":"m"}', {})
        finally:
            await proxy.stop()

    status, _headers, body = run(go())
    assert status == 502
    assert "upstream openai unreachable" in json.loads(b"".join(body))["error"]["message"]
    assert got[0].outcome == "failed"


def test_claude_codes_own_session_header_names_the_session_without_ours():
    got = []

    async def go():
        up = Upstream(lambda m, p, b: (200, JSON_HEADERS, anthropic_whole()))
        proxy, url = await started(up, on_exchange=got.append)
        try:
            await _fetch(url + "/v1/messages", b"{}", {"X-Claude-Code-Session-Id": "cc-1"})
            await _fetch(url + "/v1/messages", b"{}", {"X-Claude-Code-Session-Id": "cc-1",
                                                         "x-gasp-session": "ours"})
        finally:
            await proxy.stop()
            await up.stop()

    run(go())
    assert [ex.session for ex in got] == ["cc-1", "ours"]
