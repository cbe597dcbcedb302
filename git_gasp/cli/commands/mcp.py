"""`git gasp mcp`: serve the agent's history to an agent over MCP (stdio).

The server lives in `git_gasp.mcp`; the SDK it runs on is the optional ``mcp`` extra,
so without it this says how to install it, in one line, and exits 1.
"""

from __future__ import annotations

import os

import click

from git_gasp.base.errors import GaspError
from git_gasp.cli.options import CONTEXT
from git_gasp.store.location import require_root

EXTRA = "pip install 'git-gasp[mcp]'"


def sdk_missing() -> str | None:
    """Why the `mcp` SDK cannot be imported (one line), or None when it can."""
    try:
        import mcp.server.mcpserver  # noqa: F401
    except ImportError as exc:
        missing = (exc.name or "").split(".")[0]
        if missing not in ("mcp", "mcp_types", "pydantic", "anyio", ""):
            raise
        return f"the MCP server needs the mcp SDK: {EXTRA}"
    return None


@click.command("mcp", context_settings=CONTEXT)
def mcp() -> None:
    """Serve the agent's history (search, lineage, memory, the work queue) as a Model
    Context Protocol server on stdin/stdout."""
    why = sdk_missing()
    if why is not None:
        raise GaspError(why)
    root = require_root(os.getcwd())
    from git_gasp.mcp.server import serve  # the optional mcp SDK: loaded once it is known there

    serve(root, start=os.getcwd())
