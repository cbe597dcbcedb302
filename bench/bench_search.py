"""Benchmark `git gasp search` on a 100,000-event log against `grep -c` of the log.

    .venv/bin/python bench/bench_search.py [--events N] [--repeat R] [--dev-install]

Builds an agent repository as bench/bench_view.py does (`git gasp init`, then N
runtime-shaped events from bench/repos.py's seeded generator), with a rare word planted
in 10 observations spread over the log, and times, round-robin in the same run (medians
of R), the CLI as pip leaves it (bench/installed.py; this venv's with --dev-install):

    (a) grep -c PLANTED state/events.jsonl           the baseline (issue 48: within 2x)
    (b) git gasp search PLANTED                      10 hits, printed
    (c) grep -ci PLANTED state/events.jsonl          case ignored, as search ignores it
    (d) git gasp search flaky socket                 two common words: ~800 hits
    (e) git-gasp --version                           the interpreter and click: the floor

and, in this process, (f) `protocol.logsearch.search_log` of PLANTED over the mapped log
(the engine without the interpreter's start and the imports). Prints each median and its
ratio to (a). Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from bench_view import build as build_view  # noqa: E402
from bench_view import cli_env  # noqa: E402
from installed import installed_bin  # noqa: E402

from git_gasp.base.files import map_regular_file  # noqa: E402
from git_gasp.protocol.envelope import OPS_KIND, Event, parse_line, serialize  # noqa: E402
from git_gasp.protocol.logsearch import search_log  # noqa: E402

PLANTED = "zqxplanted"
PLANTS = 10


def build(repo: Path, n_events: int, env: dict[str, str]) -> int:
    """bench_view.py's repository at `repo`, with PLANTS observations holding PLANTED
    (each with its ops) spread evenly over the generated events; the log's size."""
    build_view(repo, n_events, env)
    log = repo / "state" / "events.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    step = len(lines) // PLANTS
    for k in range(PLANTS, 0, -1):
        at = k * step - step // 2
        near = parse_line(lines[at].rstrip(b"\n"))
        while near.kind == OPS_KIND:  # between a domain event's pair, never
            at += 1
            near = parse_line(lines[at].rstrip(b"\n"))
        plant = Event(f"event_planted-{k:04d}", 1, near.ts_ms, "agent", "evolve",
                      "observation.created",
                      {"id": f"observation_planted-{k:04d}", "summary":
                       f"the {PLANTED} word, number {k}", "metadata": {}},
                      None, near.correlation_id)
        pair = Event(f"event_planted-{k:04d}-ops", 1, near.ts_ms, "agent", "evolve", OPS_KIND,
                     [{"CreateNode": {"id": plant.payload["id"], "kind": "observation",
                                      "props": {"summary": plant.payload["summary"]}}}],
                     plant.id, plant.correlation_id)
        lines[at:at] = [serialize(plant), serialize(pair)]
    log.write_bytes(b"".join(lines))
    return log.stat().st_size


def timed(cmd: list[str], cwd: Path, env: dict[str, str], ok: tuple[int, ...]) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    took = time.perf_counter() - t0
    if proc.returncode not in ok:
        sys.exit(f"{' '.join(cmd)} failed:\n{proc.stderr.decode()}")
    return took


def in_process(log: Path) -> float:
    t0 = time.perf_counter()
    mapped = map_regular_file(log)
    try:
        found = search_log(mapped, PLANTED)
    finally:
        mapped.close()
    took = time.perf_counter() - t0
    if len(found) != PLANTS:
        sys.exit(f"the engine found {len(found)} of the {PLANTS} planted words")
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=11)
    ap.add_argument("--dev-install", action="store_true", help="this venv's git-gasp")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-search-") as tmp_name:
        tmp = Path(tmp_name)
        bin_dir = Path(sys.executable).parent if args.dev_install else installed_bin(tmp, ROOT)
        env = cli_env(tmp, bin_dir)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # byte code cached, as after a pip install
        repo = tmp / "agent"
        size = build(repo, args.events, env)
        log = repo / "state" / "events.jsonl"
        rel = "state/events.jsonl"
        cmds = {
            "(a) grep -c PLANTED": (["grep", "-c", PLANTED, rel], (0,)),
            "(b) git gasp search PLANTED": (["git", "gasp", "search", PLANTED], (0,)),
            "(c) grep -ci PLANTED": (["grep", "-ci", PLANTED, rel], (0,)),
            "(d) git gasp search flaky socket": (["git", "gasp", "search", "flaky",
                                                  "socket"], (0,)),
            "(e) git-gasp --version": (["git-gasp", "--version"], (0,)),
        }
        for cmd, ok in cmds.values():  # warm the byte code, the page cache, the saved count
            timed(cmd, repo, env, ok)
        times: dict[str, list[float]] = {k: [] for k in cmds}
        times["(f) search_log in process"] = []
        for _ in range(args.repeat):
            for name, (cmd, ok) in cmds.items():
                times[name].append(timed(cmd, repo, env, ok))
            times["(f) search_log in process"].append(in_process(log))
        print(f"log: {args.events:,} events + {PLANTS} planted ({size / 1e6:.1f} MB); "
              f"medians of {args.repeat}, round robin; "
              f"{'this venv' if args.dev_install else 'installed as pip leaves it'}")
        base = statistics.median(times["(a) grep -c PLANTED"])
        for name, ts in times.items():
            med = statistics.median(ts)
            print(f"{name:36} {med * 1000:8.1f} ms  {med / base:5.2f}x (a)")


if __name__ == "__main__":
    main()
