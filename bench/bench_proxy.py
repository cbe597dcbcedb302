"""`git gasp proxy` benchmark (not a test): what the proxy adds to a model call's time to
first byte and to last byte, against a direct connection to the same local scripted
upstream, measured in the same run, streaming and not; then 50 concurrent streams.

The upstream is tests/proxy/upstream.py's scripted aiohttp server, in the benchmark's
process beside the client: a streamed answer of `--chunks` server-sent events `--gap`
ms apart (an Anthropic Messages stream with a tool call), or a whole JSON answer. The
proxy is the installed `git-gasp proxy --port 0 --upstream anthropic=…` in its own
process, recording (into a fresh `git gasp init` repository, on its recorder thread,
off the request path), a session header per round (five sessions in turn). Each round
calls the upstream directly and through the proxy in alternating order (interleaved,
so load on the machine hits both alike); the figures are medians over `--rounds`, as
the added ms (proxy - direct) and as the ratio of the medians. The concurrent part
opens `--streams` streams at once, directly and then through the proxy, and compares
the wall time until every stream ended; every relayed stream is checked byte-
identical.

Run: .venv/bin/python bench/bench_proxy.py [--rounds N] [--chunks N] [--gap MS]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import aiohttp  # noqa: E402

from tests.proxy.upstream import (  # noqa: E402
    JSON_HEADERS,
    SSE_HEADERS,
    Upstream,
    anthropic_stream,
    anthropic_whole,
)


async def timed(client: aiohttp.ClientSession, url: str, body: bytes, headers: dict
                ) -> tuple[float, float, bytes]:
    """(ms to the first body byte, ms to the last, the body) of one POST."""
    t0 = time.perf_counter()
    first = None
    parts = []
    async with client.post(url, data=body, headers=headers) as resp:
        async for chunk in resp.content.iter_any():
            if first is None:
                first = time.perf_counter()
            parts.append(chunk)
    end = time.perf_counter()
    return ((first or end) - t0) * 1000, (end - t0) * 1000, b"".join(parts)


def _line(name: str, direct: list[float], proxied: list[float]) -> str:
    d, p = statistics.median(direct), statistics.median(proxied)
    return (f"  {name:<22} direct {d:8.2f} ms   proxy {p:8.2f} ms   "
            f"added {p - d:+7.2f} ms   ratio {p / d:5.2f}x")


async def main(args: argparse.Namespace, repo: Path) -> None:
    stream = anthropic_stream(tool=("toolu_b", "Bash", {"command": "ls -la"})) * 1
    chunks = (stream * (args.chunks // len(stream) + 1))[:args.chunks]
    whole = anthropic_whole()

    def reply(method: str, path: str, body: bytes):
        if b'"stream": true' in body:
            return 200, SSE_HEADERS, chunks
        return 200, JSON_HEADERS, whole

    up = Upstream(reply, gap=args.gap / 1000)
    upstream_url = await up.start()
    exe = Path(sys.executable).with_name("git-gasp")
    proxy = subprocess.Popen([str(exe), "proxy", "--port", "0", "--upstream",
                              f"anthropic={upstream_url}"], cwd=repo,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proxy.stderr is not None
    line = await asyncio.get_running_loop().run_in_executor(None, proxy.stderr.readline)
    found = re.search(rb"listening on (http://127\.0\.0\.1:\d+)", line)
    if not found:
        proxy.kill()
        raise SystemExit(f"the proxy did not start: {line!r}")
    proxy_url = found.group(1).decode()
    try:
        await measure(args, client_args=(upstream_url, proxy_url), reply_chunks=(chunks, whole))
    finally:
        await up.stop()
        proxy.send_signal(signal.SIGINT)
        t0 = time.perf_counter()
        stdout, _ = proxy.communicate(timeout=600)
        print(f"the proxy stopped in {time.perf_counter() - t0:.1f} s (its recorder caught "
              f"up and committed {stdout.count(b'committed')} session(s))")


async def measure(args: argparse.Namespace, client_args: tuple[str, str],
                  reply_chunks: tuple[list[bytes], list[bytes]]) -> None:
    upstream_url, proxy_url = client_args
    chunks, whole = reply_chunks
    msgs = [{"role": "user", "content": "benchmark"}]
    bodies = {"stream": json.dumps({"model": "claude-test", "stream": True,
                                    "messages": msgs}).encode(),
              "whole": json.dumps({"model": "claude-test", "messages": msgs}).encode()}
    expect = {"stream": b"".join(chunks), "whole": b"".join(whole)}
    results: dict[str, dict[str, list[float]]] = {}
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector, auto_decompress=False) as client:
        for kind in ("whole", "stream"):  # warm both paths and both connections
            for url in (upstream_url, proxy_url):
                await timed(client, url + "/v1/messages", bodies[kind], {})
        for n in range(args.rounds):
            order = (("direct", upstream_url), ("proxy", proxy_url))
            for who, url in order if n % 2 == 0 else order[::-1]:
                for kind in ("stream", "whole"):
                    headers = {"x-api-key": "sk-bench", "x-gasp-session": f"bench-{n % 5}"}
                    ttfb, ttlb, body = await timed(client, url + "/v1/messages", bodies[kind],
                                                   headers)
                    assert body == expect[kind], "the relayed body differs"
                    results.setdefault(f"{kind} first byte", {}).setdefault(who, []).append(ttfb)
                    results.setdefault(f"{kind} last byte", {}).setdefault(who, []).append(ttlb)
        print(f"{args.rounds} rounds; stream of {len(chunks)} events {args.gap} ms apart "
              f"({len(expect['stream'])} bytes), whole answer {len(expect['whole'])} bytes; "
              "medians:")
        for name, got in results.items():
            print(_line(name, got["direct"], got["proxy"]))

        async def many(url: str) -> float:
            t0 = time.perf_counter()
            got = await asyncio.gather(*[
                timed(client, url + "/v1/messages", bodies["stream"],
                      {"x-gasp-session": f"conc-{i}"}) for i in range(args.streams)])
            assert all(b == expect["stream"] for _f, _l, b in got), "a stream differs"
            return (time.perf_counter() - t0) * 1000

        walls: dict[str, list[float]] = {"direct": [], "proxy": []}
        for n in range(3):
            order = (("direct", upstream_url), ("proxy", proxy_url))
            for who, url in order if n % 2 == 0 else order[::-1]:
                walls[who].append(await many(url))
        print(f"{args.streams} concurrent streams, wall time until all ended (median of 3), "
              "every relayed stream byte-identical:")
        print(_line("all streams", walls["direct"], walls["proxy"]))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--chunks", type=int, default=24)
    ap.add_argument("--gap", type=float, default=1.0, help="ms between stream events")
    ap.add_argument("--streams", type=int, default=50)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "agent"
        where.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=where, check=True)
        subprocess.run([sys.executable, "-m", "git_gasp.cli.main", "init", "--agent-id",
                        "bench"], cwd=where, check=True, capture_output=True)
        asyncio.run(main(a, where))
