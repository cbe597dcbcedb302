"""Drive `git gasp mcp` as an agent would: the installed command spawned over stdio by
the official SDK's client (`mcp.stdio_client`, `mcp.ClientSession`)."""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

TIMEOUT_S = 60


@asynccontextmanager
async def session(cwd: Path, errlog: Path):
    """An initialised client session with `git gasp mcp` started in `cwd` (the test's
    hermetic environment passed on; the server's stderr to `errlog`)."""
    params = StdioServerParameters(command="git", args=["gasp", "mcp"], cwd=str(cwd),
                                   env=dict(os.environ))
    with errlog.open("w") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=TIMEOUT_S) as s:
                await s.initialize()
                yield s


def drive(cwd: Path, body: Callable[[ClientSession], Awaitable[Any]],
          errlog: Path | None = None) -> Any:
    """Run `body(session)` against a server started in `cwd`; return what it returns."""
    log = errlog or cwd.parent / "mcp-server.err"

    async def main() -> Any:
        with anyio.fail_after(TIMEOUT_S * 2):
            async with session(cwd, log) as s:
                return await body(s)

    return anyio.run(main)


def text(result) -> str:
    """The text of a tool result's first content block."""
    return result.content[0].text if result.content else ""


def ok(result) -> dict:
    """A successful tool result's structured content (which its text repeats)."""
    assert not result.is_error, text(result)
    assert json.loads(text(result)) == result.structured_content
    return result.structured_content


def refused(result) -> str:
    """A tool error's message: one line."""
    assert result.is_error, result
    message = text(result)
    assert message and "\n" not in message, message
    return message
