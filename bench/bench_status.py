"""Benchmark `git gasp status` on a 100,000-event log against `git status`.

    .venv/bin/python bench/bench_status.py [--events N] [--repeat R] [--before DIR]

Builds an agent repository as bench/bench_view.py does (N runtime-shaped events, every
domain event paired with its ops; uncommitted, so status counts them all), then times,
round-robin in the same run (medians of R), this venv's CLI: (a) `git status`, (b)
`git gasp status` (its count from the saved count, `conformance/saved/counts.py`, after 50
events were appended since the last status: the usual case) and, with `--before DIR`
(a checkout of the code before the saved count, e.g. ``git archive integ | tar -x -C
DIR``), (c) that code's `git gasp status`, which parses the whole log for its count.
With `--end-state`, the fold is first
saved at the log's end as a live hook saves it (`runtime/endstate.py`), which (b) opens
from. Prints each time and its ratio to (a). Not a test: nothing here asserts a time.
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

from bench_view import build, cli_env  # noqa: E402
from benchlog import event  # noqa: E402


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True)
    took = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{proc.stderr.decode()}")
    return took


def save_end_state(repo: Path) -> None:
    """Save the log's fold at its end, as a hook does after appending."""
    from git_gasp.runtime.state import AgentState

    state = AgentState.open(repo, "bench-hook")
    state.store.lease.ensure()
    if (why := state.save_end_state()) is not None:
        sys.exit(f"end state not saved: {why}")
    state.release()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--before", type=Path, help="a checkout of the code to compare with")
    ap.add_argument("--end-state", action="store_true", help="save the fold as a hook does")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-status-") as tmp_name:
        tmp = Path(tmp_name)
        env = cli_env(tmp, Path(sys.executable).parent)
        repo = tmp / "agent"
        size = build(repo, args.events, env)
        log = repo / "state" / "events.jsonl"
        if args.end_state:
            save_end_state(repo)
        before = dict(env, PYTHONPATH=str(args.before.resolve())) if args.before else None
        cmds = {"(a) git status": (["git", "status"], env),
                "(b) git gasp status": (["git", "gasp", "status"], env)}
        if before is not None:
            cmds["(c) git gasp status, before"] = (["git", "gasp", "status"], before)
        for cmd, e in cmds.values():
            timed(cmd, repo, e)  # warm the byte-code and page caches, save the count
        times: dict[str, list[float]] = {k: [] for k in cmds}
        for r in range(args.repeat):
            with open(log, "ab") as fh:  # appended since the last status
                fh.write(b"".join(event(10_000_000 + r * 50 + i) for i in range(50)))
            for name, (cmd, e) in cmds.items():
                times[name].append(timed(cmd, repo, e))
        print(f"log: {args.events:,} events ({size / 1e6:.1f} MB), 50 appended before "
              f"each round; medians of {args.repeat}")
        base = statistics.median(times["(a) git status"])
        for name, ts in times.items():
            med = statistics.median(ts)
            print(f"{name:30} {med:6.2f} s  {med / base:6.1f}x (a)")


if __name__ == "__main__":
    main()
