"""A recorded session through the proxy, in process: the scripted upstream, the relay and
the recorder on the agent repository, driven by a client coroutine."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp

from git_gasp.proxy.recorder import Recorder
from git_gasp.runtime import AgentState
from tests.proxy.upstream import Reply, Upstream, started


def record(repo: Path, reply: Callable[[str, str, bytes], Reply],
           client: Callable[[str], Awaitable[object]], *, idle: float = 600.0
           ) -> tuple[object, list[str]]:
    """Run `client(proxy url)` through a proxy recording into `repo`; (what the client
    returned, what ending the sessions did)."""
    recorder = Recorder(str(repo), str(repo), idle_s=idle)

    async def go():
        up = Upstream(reply)
        proxy, url = await started(up, recorder=recorder)
        try:
            return await client(url)
        finally:
            await proxy.stop()
            await up.stop()

    try:
        got = asyncio.run(go())
    finally:
        closed = recorder.close()
    return got, closed


async def post(url: str, body: dict | bytes, headers: dict | None = None) -> bytes:
    """POST `body` to `url`; the response's bytes (any status)."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    async with aiohttp.ClientSession() as client:
        async with client.post(url, data=data, headers=headers or {}) as resp:
            return await resp.read()


def events(repo: Path) -> list:
    """Every event of the repository's log."""
    with AgentState.open(repo) as st:
        return st.events()


def domain(repo: Path) -> list:
    """The events from the first run.started on, state.ops_applied left out."""
    evs = [e for e in events(repo) if e.kind != "state.ops_applied"]
    first = next((i for i, e in enumerate(evs) if e.kind == "run.started"), len(evs))
    return evs[first:]
