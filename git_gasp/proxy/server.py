"""The relay: an aiohttp server that forwards each request to its API's upstream
unchanged and streams the response back unchanged, byte for byte, as it arrives.

Hop-by-hop headers (RFC 9110 7.6.1) and ``Host`` are the only things not passed on;
bodies are never decoded (the client session does not decompress), never cut and never
logged, and the access log is off, so an API key in a header only passes through. A
model call's copy for the recorder (``exchange.Exchange``) is read beside the relay and
handed to ``recorder.submit`` once the response ended, however it ended.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

import aiohttp
from aiohttp import web

from git_gasp.proxy.dialect import ANTHROPIC, CHAT, GEMINI, RESPONSES, api_of, is_model_call
from git_gasp.proxy.exchange import Exchange

UPSTREAMS = {"anthropic": "https://api.anthropic.com", "openai": "https://api.openai.com",
             "gemini": "https://generativelanguage.googleapis.com"}
FAMILY = {ANTHROPIC: "anthropic", CHAT: "openai", RESPONSES: "openai", GEMINI: "gemini"}
SESSION_HEADER = "x-gasp-session"
AGENT_SESSION_HEADERS = ("x-claude-code-session-id",)  # what agents send by themselves
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
                        "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"})
_QUERY = re.compile(r"\?\S*")


def _passed(headers: Any, drop: frozenset[str]) -> list[tuple[str, str]]:
    """`headers` (a multidict) less hop-by-hop ones, those ``Connection`` names, `drop`."""
    named = {t.strip().lower() for v in headers.getall("Connection", []) for t in v.split(",")}
    return [(k, v) for k, v in headers.items()
            if k.lower() not in HOP_BY_HOP and k.lower() not in named and k.lower() not in drop]


class Proxy:
    """The proxy's server: `start` listens, `stop` ends it; `on_begin` gets each model
    call as it arrives (a future it returns is waited for before the call is relayed),
    `on_exchange` once its response ended (both from the event loop: they must not
    block)."""

    def __init__(self, upstreams: dict[str, str] | None = None, *,
                 on_exchange: Callable[[Exchange], None] | None = None,
                 on_begin: Callable[[Exchange], Future | None] | None = None,
                 session_header: str = SESSION_HEADER) -> None:
        self.upstreams = {**UPSTREAMS, **(upstreams or {})}
        self.on_exchange = on_exchange
        self.on_begin = on_begin
        self.session_header = session_header
        self.client: aiohttp.ClientSession | None = None
        self.runner: web.AppRunner | None = None

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> int:
        """Listen on `host`:`port` (0: a free one); return the port."""
        app = web.Application(client_max_size=0)
        app.router.add_route("*", "/{tail:.*}", self.handle)
        self.client = aiohttp.ClientSession(
            auto_decompress=False, timeout=aiohttp.ClientTimeout(total=None, sock_connect=30),
            connector=aiohttp.TCPConnector(limit=0))
        self.runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self.runner.setup()
        site = web.TCPSite(self.runner, host, port)
        await site.start()
        return int(self.runner.addresses[0][1])

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()
        if self.client is not None:
            await self.client.close()

    def upstream_url(self, api: str, raw_path: str) -> str:
        return self.upstreams[FAMILY[api]].rstrip("/") + raw_path

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.content.read()
        api = api_of(request.path, request.headers)
        ex = None
        if self.on_exchange is not None and is_model_call(api, request.method, request.path):
            session = request.headers.get(self.session_header) or next(
                (request.headers[h] for h in AGENT_SESSION_HEADERS if h in request.headers),
                None)
            ex = Exchange(api, request.method, request.path_qs, session, body)
            if self.on_begin is not None:
                first = self.on_begin(ex)
                if first is not None:  # a new session: what it starts from is read first
                    await asyncio.wrap_future(first)
        try:
            return await self._relay(request, api, body, ex)
        finally:
            if ex is not None:
                if ex.outcome == "pending":
                    ex.finish("aborted")
                self.on_exchange(ex)

    async def _relay(self, request: web.Request, api: str, body: bytes,
                     ex: Exchange | None) -> web.StreamResponse:
        assert self.client is not None
        headers = _passed(request.headers, frozenset({"host", "content-length"}))
        try:
            up_cm = self.client.request(request.method, self.upstream_url(api, request.raw_path),
                                        headers=headers, data=body, allow_redirects=False,
                                        skip_auto_headers=("User-Agent", "Accept",
                                                           "Accept-Encoding", "Content-Type"))
            up = await up_cm.__aenter__()
        except (aiohttp.ClientError, OSError, asyncio.TimeoutError) as exc:
            # no query string in what is said: Gemini's key may be in it
            why = (f"upstream {FAMILY[api]} unreachable: {type(exc).__name__}: "
                   + _QUERY.sub("?…", str(exc)))
            if ex is not None:
                ex.problems.append(why)
                ex.finish("failed")
            data = json.dumps({"error": {"type": "proxy_error", "message": why}}).encode()
            return web.Response(status=502, body=data, content_type="application/json")
        try:
            resp = web.StreamResponse(status=up.status, reason=up.reason)
            for k, v in _passed(up.headers, frozenset()):
                resp.headers.add(k, v)
            if ex is not None:
                ex.respond(up.status, up.headers.get("Content-Type", ""),
                           up.headers.get("Content-Encoding", ""))
            await resp.prepare(request)
            try:
                async for chunk in up.content.iter_any():
                    try:
                        await resp.write(chunk)  # relayed first, read after
                    except ConnectionResetError:  # the client left
                        if ex is not None:
                            ex.problems.append("client disconnected mid-stream")
                            ex.finish("aborted")
                        return resp
                    if ex is not None:
                        ex.feed(chunk)
                try:
                    await resp.write_eof()
                except ConnectionResetError:
                    pass  # the client left after the last byte: the response is whole
            except (aiohttp.ClientPayloadError, aiohttp.ClientConnectionError,
                    asyncio.TimeoutError) as exc:  # the upstream's stream broke
                if ex is not None:
                    ex.problems.append(f"upstream stream broke: {type(exc).__name__}: "
                                       + _QUERY.sub("?…", str(exc)))
                    ex.finish("aborted")
                return resp
            if ex is not None:
                ex.finish("completed")
            return resp
        finally:
            await up_cm.__aexit__(None, None, None)
