"""Runtime benchmarks (not tests): print timings and ratios.

1. AgentState.open on a 200,000-event log with a snapshot 1,000 events behind the end,
   against the same open without the snapshot (the open must not parse covered lines):
   with the verified snapshot cache under the git dir warm (every open after the first),
   and with it dropped before each open (the first open after a new snapshot).
2. Recording 10,000 events in one run, with fsync per batch and without.

Run: .venv/bin/python bench/bench_runtime.py [--events N] [--record N]
"""

from __future__ import annotations

import argparse
import gc
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from git_gasp.base.ids import new_id
from git_gasp.protocol.envelope import OPS_KIND, Event, parse_log, serialize
from git_gasp.protocol.fold import fold
from git_gasp.runtime.state import AgentState, create_node, relate
from git_gasp.store.snapshots import write_snapshot


def make_agent(where: Path) -> Path:
    where.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=where, check=True)
    subprocess.run([sys.executable, "-m", "git_gasp.cli.main", "init", "--agent-id", "bench"],
                   cwd=where, check=True, capture_output=True)
    return where


def synthetic_log(n_events: int) -> bytes:
    """A log shaped like the runtime's: runs holding observations, patches, evals."""
    out = []
    ts = 1_770_000_000_000
    actor = ("agent", "bench")
    goal = "goal_bench"
    ev = Event("event_g", 1, ts, *actor, "goal.created",
               {"id": goal, "title": "bench", "status": "Open", "summary": "", "metadata": {}},
               None, goal)
    out += [ev, Event("event_go", 1, ts, *actor, OPS_KIND,
                      [create_node(goal, "goal", {"title": "bench", "status": "Open"})],
                      "event_g", goal)]
    run = None
    started = None
    i = 0
    while len(out) < n_events:
        i += 1
        ts += 1
        if run is None or i % 50 == 0:
            run = new_id("run")
            started = new_id("event")
            out.append(Event(started, 1, ts, *actor, "run.started",
                             {"run_id": run, "task": f"task {i}", "metadata": {}}, None, run))
            out.append(Event(new_id("event"), 1, ts, *actor, OPS_KIND,
                             [create_node(run, "run", {"task": f"task {i}", "status": "running",
                                                       "started_event": started})],
                             started, run))
            continue
        kind, node_kind = (("patch.proposed", "patch") if i % 3 == 0 else
                           ("observation.created", "observation"))
        nid = new_id(node_kind)
        props = {"title": f"item {i}", "status": "Proposed"} if node_kind == "patch" else {
            "summary": f"observed thing number {i} while running the benchmark"}
        domain = Event(new_id("event"), 1, ts, *actor, kind, {"id": nid, **props,
                                                              "metadata": {}}, started, run)
        ops = [create_node(nid, node_kind, props), relate(nid, "produced_by", run)]
        if node_kind == "patch":
            ops.append(relate(nid, "advances", goal))
        out += [domain, Event(new_id("event"), 1, ts, *actor, OPS_KIND, ops, domain.id, run)]
    return b"".join(serialize(e) for e in out[:n_events])


def best_of(fn, repeat: int, setup=None) -> tuple[float, float]:
    """(best, median) seconds of fn(); the previous result is freed outside the timer
    (tearing down a 100,000-node graph is not part of opening one)."""
    times = []
    for _ in range(repeat):
        if setup is not None:
            setup()
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
        del result
    return min(times), statistics.median(times)


def bench_open(tmp: Path, n_events: int, behind: int) -> None:
    root = make_agent(tmp / "open")
    log = synthetic_log(n_events)
    if log.count(b"\n") % 2:  # end on a complete pair
        log = log[: log.rfind(b"\n", 0, len(log) - 1) + 1]
    (root / "state/events.jsonl").write_bytes(log)
    lines = log.count(b"\n")
    upto = lines - behind
    parsed = parse_log(log)
    assert not parsed.errors
    graph = fold(parsed.events[:upto]).graph
    write_snapshot(root, log, graph, upto, parsed.events[upto - 1].id)
    # The fixture's millions of parsed objects would otherwise sit in the GC's oldest
    # generation and make whichever open triggers a full collection pay for them.
    del parsed, graph
    gc.collect()
    cache = root / ".git/gasp/snapshot-cache"

    def drop_cache() -> None:
        shutil.rmtree(cache, ignore_errors=True)
        gc.collect()

    cold = best_of(lambda: AgentState.open(root, "b"), 3, setup=drop_cache)
    AgentState.open(root, "b")  # writes the cache entry
    with_snap = best_of(lambda: AgentState.open(root, "b"), 5, setup=gc.collect)
    without = best_of(lambda: AgentState.open(root, "b", use_snapshots=False), 3,
                      setup=gc.collect)
    seeded = AgentState.open(root, "b")
    full = AgentState.open(root, "b", use_snapshots=False)
    assert seeded.seeded_from and seeded.seed_cached and seeded.graph.same_as(full.graph)
    drop_cache()
    uncached = AgentState.open(root, "b")
    assert uncached.seeded_from and not uncached.seed_cached
    assert uncached.graph.same_as(full.graph)
    print(f"open: {lines} events, {len(log) / 1e6:.1f} MB log, {len(full.graph.nodes)} nodes, "
          f"snapshot {behind} events behind the end")
    for label, (best, median) in (("with snapshot (cached)", with_snap),
                                  ("with snapshot, no cache", cold),
                                  ("without snapshot", without)):
        print(f"  {label:24s} best {best * 1000:8.1f} ms  median {median * 1000:8.1f} ms")
    print(f"  ratio (best):    {without[0] / with_snap[0]:.1f}x faster with the snapshot "
          f"(cache warm; the first open after a new snapshot, which writes the cache: "
          f"{without[0] / cold[0]:.1f}x)")
    print(f"  ratio (median):  {without[1] / with_snap[1]:.1f}x  (no cache: "
          f"{without[1] / cold[1]:.1f}x)")


def bench_record(tmp: Path, n_events: int) -> None:
    results = {}
    for fsync in (True, False):
        root = make_agent(tmp / f"record-{fsync}")
        state = AgentState.open(root, "b", fsync=fsync)
        goal = state.record_goal("bench")
        state.start_run("bench", goal=goal)
        t0 = time.perf_counter()
        for i in range(n_events // 2):  # each observation is a 2-event batch
            state.record_observation(f"observation {i}")
        elapsed = time.perf_counter() - t0
        state.finish_run("done")
        results[fsync] = n_events / elapsed
    print(f"record: {n_events} events in one run (2-event batches)")
    print(f"  fsync per batch: {results[True]:10.0f} events/s")
    print(f"  no fsync:        {results[False]:10.0f} events/s")
    print(f"  fsync costs {results[False] / results[True]:.1f}x")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=200_000)
    ap.add_argument("--behind", type=int, default=1_000)
    ap.add_argument("--record", type=int, default=10_000)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="gasp-bench-"))
    try:
        bench_open(tmp, args.events, args.behind)
        bench_record(tmp, args.record)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
