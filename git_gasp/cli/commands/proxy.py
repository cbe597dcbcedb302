"""`git gasp proxy`: a local model-API proxy that records the sessions passing through it.

The relay and the recorder live in `git_gasp.proxy`; they run on aiohttp, the optional
``proxy`` extra, so without it this says how to install it, in one line, and exits 1.
"""

from __future__ import annotations

import asyncio
import os
import signal

import click

from git_gasp.base import git
from git_gasp.base.errors import GaspError, UsageError
from git_gasp.cli.options import CONTEXT
from git_gasp.store.location import require_root

EXTRA = "pip install 'git-gasp[proxy]'"
APIS = ("anthropic", "openai", "gemini")
ENV = {"anthropic": "ANTHROPIC_BASE_URL", "openai": "OPENAI_BASE_URL",
       "gemini": "GOOGLE_GEMINI_BASE_URL"}


def _upstreams(values: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for value in values:
        api, sep, url = value.partition("=")
        if not sep or api not in APIS or not url.startswith(("http://", "https://")):
            raise UsageError(f"--upstream {value!r}: expected API=URL, API one of "
                             f"{', '.join(APIS)}, URL http(s)://…")
        out[api] = url
    return out


async def _serve(root: str, cwd: str, host: str, port: int, upstreams: dict[str, str],
                 idle: float, header: str) -> list[str]:
    from git_gasp.proxy.recorder import Recorder  # the optional aiohttp: loaded once known
    from git_gasp.proxy.server import Proxy

    recorder = Recorder(root, cwd, idle_s=idle)
    proxy = Proxy(upstreams, on_exchange=recorder.submit, on_begin=recorder.begin,
                  session_header=header)
    try:
        try:
            bound = await proxy.start(host, port)
        except OSError as exc:
            raise GaspError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
        stop = asyncio.Event()  # set by SIGINT/SIGTERM, from before the address is said
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        base = f"http://{'127.0.0.1' if host == '0.0.0.0' else host}:{bound}"
        every = " (and on every other interface)" if host == "0.0.0.0" else ""
        click.echo(f"git gasp proxy: listening on {base}{every}; recording into {root}",
                   err=True)
        for api in APIS:
            suffix = "/v1" if api == "openai" else ""
            click.echo(f"  {ENV[api]}={base}{suffix}  -> {proxy.upstreams[api]}", err=True)
        await stop.wait()
    finally:
        await proxy.stop()
        closed = await asyncio.get_running_loop().run_in_executor(None, recorder.close)
    return closed


@click.command("proxy", context_settings=CONTEXT)
@click.option("--port", type=click.IntRange(0, 65535), default=8788, show_default=True,
              help="The port to listen on (0: a free one, printed).")
@click.option("--listen-any", is_flag=True,
              help="Listen on every interface, not only 127.0.0.1 (anyone who can reach "
                   "the port can then send calls through it into your agent's history).")
@click.option("--upstream", "upstreams", multiple=True, metavar="API=URL",
              help="Where API (anthropic, openai, gemini) calls go (default: the vendor's "
                   "URL); repeat for each API.")
@click.option("--idle", type=click.FloatRange(min=0.1), default=600.0, show_default=True,
              help="Seconds without a model call that end a session sent without the "
                   "session header.")
@click.option("--session-header", default="x-gasp-session", show_default=True,
              help="The request header naming the agent session a call belongs to.")
def proxy(port: int, listen_any: bool, upstreams: tuple[str, ...], idle: float,
          session_header: str) -> None:
    """Relay an agent's model API calls (Anthropic Messages, OpenAI Chat Completions and
    Responses, Gemini generateContent; streamed or not) unchanged to the upstream, and
    record each session as a run, its model calls, tool calls and commits; until
    interrupted."""
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        raise GaspError(f"git gasp proxy needs aiohttp: {EXTRA}") from None
    ups = _upstreams(upstreams)
    cwd = os.getcwd()
    root = require_root(cwd)
    try:
        project = str(git.work_tree_top(cwd))
    except GaspError:
        project = cwd
    host = "0.0.0.0" if listen_any else "127.0.0.1"
    for line in asyncio.run(_serve(root, project, host, port, ups, idle,
                                   session_header.lower())):
        click.echo(line)
