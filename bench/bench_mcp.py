"""`git gasp mcp` benchmark (not a test): each tool's latency on a 200,000-event log,
as a ratio to a warm `AgentState.open` of the same log.

The log is `bench_runtime.synthetic_log` (runs holding observations and patches that
advance one goal), with a snapshot 1,000 events behind its end and the verified
snapshot cache warm, plus 1,000 memory facts. The server is built as
`git gasp mcp` builds it (`git_gasp.mcp.server.build`, one fold per process) and each
tool is called through the SDK's `MCPServer.call_tool` (argument validation, the call,
the JSON conversion; no transport): best and median of the repeats, the first call of
each tool (which builds the indexes it keeps) included. `follow` is a search just after
two events were appended behind the server's back (`AgentState.refresh` folds just
those; the append is not timed); `stdio search` is a search over the real stdio
transport, to the installed `git gasp mcp` spawned by the SDK's client.

Run: .venv/bin/python bench/bench_mcp.py [--events N] [--repeat N]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack, asynccontextmanager
from pathlib import Path

import anyio
from bench_runtime import make_agent, synthetic_log

from git_gasp.base.ids import new_id, now_ms
from git_gasp.protocol.envelope import parse_log
from git_gasp.protocol.fold import fold
from git_gasp.runtime.state import AgentState
from git_gasp.store.snapshots import write_snapshot


def build_repo(tmp: Path, n_events: int, behind: int) -> Path:
    root = make_agent(tmp / "agent")
    log = synthetic_log(n_events)
    if log.count(b"\n") % 2:  # end on a complete pair
        log = log[: log.rfind(b"\n", 0, len(log) - 1) + 1]
    (root / "state/events.jsonl").write_bytes(log)
    parsed = parse_log(log)
    upto = len(parsed.events) - behind
    write_snapshot(root, log, fold(parsed.events[:upto]).graph, upto,
                   parsed.events[upto - 1].id)
    source = parsed.events[-1].id
    facts = b"".join(json.dumps({
        "id": new_id("fact"), "ts_ms": now_ms(), "text": f"fact {i} about the benchmark",
        "derived_from": [source], "supersedes": None}).encode() + b"\n" for i in range(1000))
    (root / "memory/facts.jsonl").write_bytes(facts)
    del parsed
    gc.collect()
    AgentState.open(root, "b")  # writes the snapshot cache entry
    return root


def timed(fn, repeat: int, setup=None) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        if setup is not None:
            setup()
        gc.collect()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def bench(root: Path, repeat: int) -> None:
    from git_gasp.mcp.server import build
    from git_gasp.mcp.service import Service

    warm = timed(lambda: AgentState.open(root, "b"), repeat)
    t0 = time.perf_counter()
    service = Service(root, "b")
    server = build(service)
    started = time.perf_counter() - t0
    graph = service.state().graph
    patch = next(i for i in reversed(list(graph.node_ids())) if i.startswith("patch_"))

    def call(name: str, args: dict):
        async def go():
            result = await server.call_tool(name, args)
            assert not result.is_error, result.content
        return lambda: anyio.run(go)

    tools = {
        "gasp_search (rare words)": call("gasp_search", {"query": "thing number 199999"}),
        "gasp_search (common, limit 20)": call("gasp_search", {"query": "observed"}),
        "gasp_search (by kind and status)": call("gasp_search", {
            "query": "item", "kinds": ["patch"], "status": "Proposed"}),
        "gasp_lineage (patch id, depth 1)": call("gasp_lineage", {"id": patch, "depth": 1}),
        "gasp_lineage (short id ...tail)": call("gasp_lineage", {"id": "..." + patch[-10:],
                                                                  "depth": 1}),
        "gasp_recall": call("gasp_recall", {"query": "benchmark"}),
        "gasp_ready": call("gasp_ready", {}),
    }
    rows = [(name, timed(fn, repeat)) for name, fn in tools.items()]

    writer = AgentState.open(root, "b")  # the same worker: no lease to wait for

    def append() -> None:
        writer.record_observation("appended behind the server")
        writer.release()
    rows.append(("follow (2 new events, then search)",
                 timed(call("gasp_search", {"query": "behind the server", "limit": 1}),
                       repeat, setup=append)))
    with ExitStack() as stack:
        rows.append(("stdio search (round trip)",
                     timed(stdio_search(root, stack), max(3, repeat // 2))))
    n_nodes = graph.node_count()
    print(f"mcp: {service.state().store.line_count} events, {n_nodes} nodes, "
          f"1000 facts; warm AgentState.open best {warm[0] * 1000:.1f} ms, "
          f"median {warm[1] * 1000:.1f} ms; server start (open + build) "
          f"{started * 1000:.1f} ms")
    print(f"  {'tool':38s} {'best ms':>9s} {'median ms':>10s} {'ratio to warm open':>19s}")
    for name, (best, median) in rows:
        print(f"  {name:38s} {best * 1000:9.1f} {median * 1000:10.1f} "
              f"{best / warm[0]:18.3f}x")


@asynccontextmanager
async def _session(params):
    from mcp import ClientSession, stdio_client

    with open(os.devnull, "w") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


def stdio_search(root: Path, stack: ExitStack):
    """A search per call over stdio, to one server started once (its start not timed)."""
    from anyio.from_thread import start_blocking_portal
    from mcp import StdioServerParameters

    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    params = StdioServerParameters(command="git", args=["gasp", "mcp"], cwd=str(root),
                                   env=dict(os.environ, PATH=path))  # this venv's git-gasp
    portal = stack.enter_context(start_blocking_portal())
    session = stack.enter_context(portal.wrap_async_context_manager(_session(params)))

    def call() -> None:
        res = portal.call(session.call_tool, "gasp_search", {"query": "thing number 7"})
        assert not res.is_error, res.content
    call()  # the server's fold happens here, untimed
    return call


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=200_000)
    ap.add_argument("--behind", type=int, default=1_000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="gasp-bench-mcp-"))
    try:
        bench(build_repo(tmp, args.events, args.behind), args.repeat)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
