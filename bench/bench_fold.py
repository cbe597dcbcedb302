"""Benchmark: parse + fold a large GASP log against the stdlib JSON library alone.

Generates a deterministic (seeded) log of realistic events in canonical bytes, shaped
like the spec's worked example: goal / patch / eval / decision domain events each
followed by their `state.ops_applied` pair (CreateNode / CreateRelation / UpdateNode),
plus raw run.started / tool.called / model.called / run.finished events.

  (a) baseline: `json.loads` of every line (split on b"\\n"), results kept alive
  (b) `parse_log(data)` + `fold(events)`, also timed as parse alone and fold alone

Figures are printed as ratios against (a), measured in the same process, plus
absolute times; the workloads run round-robin so background load hits all of them.
Peak memory of (a) and (b) is measured in fresh subprocesses (each reports its VmHWM).
Target: (b) <= 1.5x (a) and peak memory of (b) under 2 GB. Never asserts.

    .venv/bin/python bench/bench_fold.py [--quick] [--events N] [--repeat R]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from git_gasp.protocol.envelope import Event, parse_log, serialize  # noqa: E402
from git_gasp.protocol.fold import fold  # noqa: E402

SEED = 20250207
TARGET_RATIO = 1.5
TARGET_PEAK_BYTES = 2 * 1024**3

_WORDS = (
    "retry counter timeout state persist backoff jitter flaky network socket test cargo "
    "build cache lock lease fold graph node relation snapshot integrity commit branch "
    "merge append-only durable fsync rename worker agent skill patch eval decision goal "
    "regression latency budget token prompt summary handler parser envelope schema "
    "résumé naïve café — ✓"
).split()


# --- log generation -------------------------------------------------------------------


class _Gen:
    """Emits events in line order; every field comes from one seeded RNG."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.ts = 1_739_000_000_000
        self.events: list[Event] = []
        self.agent = "evolve"

    def uid(self, prefix: str) -> str:
        return f"{prefix}_{uuid.UUID(int=self.rng.getrandbits(128), version=4)}"

    def text(self, lo: int, hi: int) -> str:
        """A sentence of roughly lo..hi characters."""
        rng = self.rng
        target = rng.randint(lo, hi)
        out: list[str] = []
        size = 0
        while size < target:
            w = rng.choice(_WORDS)
            out.append(w)
            size += len(w) + 1
        return " ".join(out)

    def emit(
        self,
        kind: str,
        payload: object,
        causation: str | None,
        correlation: str | None,
        actor: tuple[str, str] | None = None,
    ) -> str:
        self.ts += self.rng.randint(1, 250)
        akind, aid = actor or ("agent", self.agent)
        eid = self.uid("event")
        self.events.append(
            Event(eid, 1, self.ts, akind, aid, kind, payload, causation, correlation)
        )
        return eid

    def pair(
        self, kind: str, payload: dict, ops: list, causation: str | None, correlation: str
    ) -> str:
        """A domain event and its state.ops_applied (the pairing rule)."""
        did = self.emit(kind, payload, causation, correlation)
        self.ts += 1
        self.emit("state.ops_applied", ops, did, correlation)
        return did

    def run(self) -> None:
        rng = self.rng
        me = {"kind": "agent", "id": self.agent}
        goal = self.uid("goal")
        title = self.text(20, 50)
        gev = self.pair(
            "goal.created",
            {
                "id": goal,
                "title": title,
                "summary": self.text(80, 200),
                "status": "Open",
                "owner": me,
                "metadata": {"priority": rng.randint(1, 5)},
            },
            [
                {
                    "CreateNode": {
                        "id": goal,
                        "kind": "goal",
                        "props": {"title": title, "status": "Open"},
                    }
                }
            ],
            None,
            goal,
        )
        run_id = self.uid("run")
        cause = self.emit(
            "run.started",
            {"run_id": run_id, "task": self.text(40, 120), "metadata": {"goal": goal}},
            gev,
            run_id,
        )
        for _ in range(rng.randint(1, 4)):
            patch = self.uid("patch")
            ptitle = self.text(20, 60)
            commit = f"{rng.getrandbits(160):040x}"
            pev = self.pair(
                "patch.proposed",
                {
                    "id": patch,
                    "title": ptitle,
                    "status": "Proposed",
                    "created_by": me,
                    "summary": self.text(80, 220),
                    "metadata": {"commit": commit},
                },
                [
                    {
                        "CreateNode": {
                            "id": patch,
                            "kind": "patch",
                            "props": {
                                "title": ptitle,
                                "status": "Proposed",
                                "references_commit": commit[:7],
                            },
                        }
                    },
                    {"CreateRelation": {"from": patch, "rel": "advances", "to": goal, "props": {}}},
                ],
                cause,
                run_id,
            )
            tev = pev
            for _ in range(rng.randint(1, 3)):
                tev = self.emit(
                    "model.called",
                    {
                        "id": self.uid("model"),
                        "run_id": run_id,
                        "model": "claude-sonnet-4",
                        "prompt_summary": self.text(40, 120),
                        "response_summary": self.text(40, 120),
                        "input_tokens": rng.randint(500, 90_000),
                        "output_tokens": rng.randint(50, 4_000),
                        "latency_ms": rng.randint(300, 40_000),
                        "metadata": {},
                    },
                    tev,
                    run_id,
                )
                tev = self.emit(
                    "tool.called",
                    {
                        "id": self.uid("tool"),
                        "run_id": run_id,
                        "tool": "cargo test",
                        "input_summary": self.text(20, 80),
                        "output_summary": self.text(40, 150),
                        "success": rng.random() < 0.8,
                        "metadata": {"exit_code": 0},
                    },
                    tev,
                    run_id,
                    actor=("tool", "cargo"),
                )
            ev = self.uid("eval")
            passed = rng.random() < 0.6
            status = "Passed" if passed else "Failed"
            score = round(rng.random(), 3)
            cmd = "cargo test " + self.text(5, 30)
            eev = self.pair(
                "eval.finished",
                {
                    "id": ev,
                    "command": cmd,
                    "status": status,
                    "score": score,
                    "metadata": {
                        "duration_ms": rng.randint(100, 600_000),
                        "log": self.text(60, 180),
                    },
                },
                [
                    {
                        "CreateNode": {
                            "id": ev,
                            "kind": "eval",
                            "props": {"command": cmd, "status": status, "score": score},
                        }
                    },
                    {
                        "CreateRelation": {
                            "from": patch,
                            "rel": "validated_by",
                            "to": ev,
                            "props": {},
                        }
                    },
                ],
                tev,
                run_id,
            )
            dec = self.uid("decision")
            dstatus = "Approved" if passed else "Rejected"
            self.pair(
                "decision.created",
                {
                    "id": dec,
                    "status": dstatus,
                    "reason": self.text(60, 200),
                    "decided_by": me,
                    "metadata": {},
                },
                [
                    {"CreateNode": {"id": dec, "kind": "decision", "props": {"status": dstatus}}},
                    {
                        "CreateRelation": {
                            "from": patch,
                            "rel": "approved_by" if passed else "rejected_by",
                            "to": dec,
                            "props": {},
                        }
                    },
                    {
                        "UpdateNode": {
                            "id": patch,
                            "props": {
                                "status": "Promoted" if passed else "Rejected",
                                "review": {"decision": dec, "score": score},
                            },
                        }
                    },
                ],
                eev,
                run_id,
            )
        self.emit(
            "run.finished",
            {"run_id": run_id, "outcome": "success", "summary": self.text(60, 200), "metadata": {}},
            cause,
            run_id,
        )


def generate(n_events: int, seed: int = SEED) -> bytes:
    """Canonical bytes of exactly n_events events (the last run is cut short)."""
    gen = _Gen(seed)
    while len(gen.events) < n_events:
        gen.run()
    return b"".join(serialize(e) for e in gen.events[:n_events])


# --- workloads ------------------------------------------------------------------------


def baseline_json(data: bytes) -> list:
    """(a) The stdlib JSON library alone."""
    loads = json.loads
    return [loads(line) for line in data.split(b"\n") if line]


def parse_and_fold(data: bytes):
    """(b) The library's real path."""
    parsed = parse_log(data)
    return parsed, fold(parsed.events)


def _timed(fn, *args) -> tuple[float, object]:
    gc.collect()
    t0 = time.perf_counter()
    result = fn(*args)
    return time.perf_counter() - t0, result


def time_workloads(data: bytes, repeat: int) -> tuple[dict[str, list[float]], object]:
    """Run the workloads round-robin `repeat` times (so machine noise hits all alike)."""
    times: dict[str, list[float]] = {"json": [], "parse": [], "fold": [], "both": []}
    graph = None
    for _ in range(repeat):
        t, values = _timed(baseline_json, data)
        times["json"].append(t)
        del values
        t, parsed = _timed(parse_log, data)
        times["parse"].append(t)
        if parsed.errors:  # the generator's own sanity; reported, never asserted
            print(f"WARNING: {len(parsed.errors)} bad lines, first: {parsed.errors[0]}")
        t, result = _timed(fold, parsed.events)
        times["fold"].append(t)
        graph = result.graph
        del parsed, result
        t, both = _timed(parse_and_fold, data)
        times["both"].append(t)
        del both
    return times, graph


# --- peak memory in a fresh subprocess ------------------------------------------------
#
# Linux carries ru_maxrss across fork+exec (a child starts with its parent's high-water
# mark), so the children are spawned before this process grows, and each reports VmHWM
# (the high-water mark of its own address space, reset by exec) beside ru_maxrss.


def _peak_rss() -> int:
    """This process's peak resident set size in bytes."""
    try:
        with open("/proc/self/status", "rb") as fh:
            for row in fh:
                if row.startswith(b"VmHWM:"):
                    return int(row.split()[1]) * 1024
    except OSError:
        pass
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def _child(mode: str, path: str, n: str) -> None:
    """Run one workload; print this process's peak RSS (bytes) as JSON."""
    if mode == "gen":
        Path(path).write_bytes(generate(int(n)))
        return
    data = Path(path).read_bytes()
    if mode == "fold":
        parsed, result = parse_and_fold(data)
        count = len(parsed.events) + len(result.graph.nodes)
    elif mode == "json":
        count = len(baseline_json(data))
    else:  # "read": the interpreter, the imports and the raw bytes only
        count = len(data)
    print(json.dumps({"peak": _peak_rss(), "count": count}))


def _run_child(mode: str, path: str, n: int = 0) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", mode, path, str(n)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout) if out.stdout.strip() else {}


# --- report ---------------------------------------------------------------------------


def _mib(n: float) -> str:
    return f"{n / 1024**2:,.0f} MiB"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="20,000 events, 3 repeats")
    ap.add_argument("--events", type=int, default=None, help="log size (default 200,000)")
    ap.add_argument("--repeat", type=int, default=None, help="timed runs per workload")
    ap.add_argument("--child", nargs=3, metavar=("MODE", "PATH", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(*args.child)
        return
    n = args.events or (20_000 if args.quick else 200_000)
    repeat = args.repeat or (3 if args.quick else 5)

    print(f"bench_fold: {n:,} events, seed {SEED}, median of {repeat} runs")
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "events.jsonl")
        t0 = time.perf_counter()
        _run_child("gen", path, n)
        t_gen = time.perf_counter() - t0
        # Memory first, while this process is still small (see _peak_rss).
        mem = {mode: _run_child(mode, path)["peak"] for mode in ("read", "json", "fold")}
        children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
        data = Path(path).read_bytes()
    lines = data.count(b"\n")
    ops_events = data.count(b'"kind":"state.ops_applied"')
    print(
        f"generated {len(data) / 1024**2:,.1f} MiB, {lines:,} lines "
        f"(avg {len(data) / lines:,.0f} B/line, {ops_events:,} ops events) "
        f"in {t_gen:.1f}s"
    )

    times, g = time_workloads(data, repeat)
    med = {k: statistics.median(v) for k, v in times.items()}
    best = {k: min(v) for k, v in times.items()}
    print(f"graph: {len(g.nodes):,} nodes, {len(g.relations):,} relations, version {g.version:,}")
    print()
    print(
        f"{'workload':<34}{'median s':>10}{'min s':>9}{'events/s':>12}"
        f"{'vs (a) median':>15}{'min':>7}"
    )
    rows = [
        ("(a) json.loads per line [baseline]", "json"),
        ("    parse_log alone", "parse"),
        ("    fold alone", "fold"),
        ("(b) parse_log + fold", "both"),
    ]
    for label, key in rows:
        print(
            f"{label:<34}{med[key]:>10.3f}{best[key]:>9.3f}{n / med[key]:>12,.0f}"
            f"{med[key] / med['json']:>14.2f}x{best[key] / best['json']:>6.2f}x"
        )
    ratio = med["both"] / med["json"]
    verdict = "meets" if ratio <= TARGET_RATIO else "MISSES"
    print(f"(b)/(a) = {ratio:.2f}x (medians) -> {verdict} the target of <= {TARGET_RATIO}x")

    print()
    print("peak RSS (VmHWM) of a fresh subprocess:")
    print(f"  interpreter + imports + raw log bytes : {_mib(mem['read'])}")
    print(f"  (a) json.loads, values kept           : {_mib(mem['json'])}")
    print(
        f"  (b) parse_log + fold                  : {_mib(mem['fold'])} "
        f"({mem['fold'] / mem['json']:.2f}x (a))"
    )
    print(f"  (RUSAGE_CHILDREN ru_maxrss, the max over all children: {_mib(children)})")
    verdict = "meets" if mem["fold"] < TARGET_PEAK_BYTES else "MISSES"
    print(f"  -> (b) {verdict} the target of < {_mib(TARGET_PEAK_BYTES)}")


if __name__ == "__main__":
    main()
