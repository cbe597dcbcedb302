"""Benchmark the union merge driver against git's own text merge on the same inputs.

Run: ``.venv/bin/python bench/bench_merge.py [--repeat N]``

Each case is a common base of N canonical-looking events (~250 bytes) and two
sides that each append N more (distinct ids; the "overlap" case makes half of
theirs' lines ones ours appended too). Timed, median of --repeat runs:

- ``merge_jsonl``: the driver's merge in this process (bytes in, bytes out);
- ``driver``: ``git-gasp merge-driver`` as git runs it (a fresh process, files on disk);
- ``merge-file``: ``git merge-file -p`` on the same three files (the baseline; it
  reports a conflict for two appends at the end, which is why the driver exists).

Prints seconds, microseconds per output line, driver/merge-file ratios and the
100k/10k scaling ratio (1.0 = linear). Asserts nothing about time; it does check
the merge is clean and holds every line once.
"""

from __future__ import annotations

import argparse
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

from benchlog import event

from git_gasp.merge.jsonl import merge_jsonl


def versions(n: int, overlap: bool = False) -> tuple[bytes, bytes, bytes, int]:
    """base, ours, theirs and the expected number of lines in the result."""
    base = b"".join(event(i) for i in range(n))
    ours_new = b"".join(event(i) for i in range(n, 2 * n))
    if overlap:  # theirs: half its lines are ours' too (same order), half its own
        theirs_new = b"".join(event(i) for i in range(n, 2 * n, 2)) + b"".join(
            event(i) for i in range(2 * n, 2 * n + n // 2)
        )
        total = 2 * n + n // 2
    else:
        theirs_new = b"".join(event(i) for i in range(2 * n, 3 * n))
        total = 3 * n
    return base, base + ours_new, base + theirs_new, total


def median_time(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def driver_exe() -> str:
    candidate = pathlib.Path(sys.executable).with_name("git-gasp")
    found = str(candidate) if candidate.exists() else shutil.which("git-gasp")
    if not found:
        raise SystemExit("git-gasp is not installed; run `pip install -e .` first")
    return found


def run_case(label: str, n: int, overlap: bool, repeat: int, tmp: pathlib.Path) -> dict:
    base, ours, theirs, total = versions(n, overlap)
    result = merge_jsonl(base, ours, theirs)
    lines = result.data.splitlines()
    if not result.clean or len(lines) != total or len(set(lines)) != total:
        raise SystemExit(f"{label}: the merge is not clean or lost/duplicated lines")

    files = {name: tmp / f"{label}.{name}" for name in ("O", "A", "B", "A0")}
    files["O"].write_bytes(base)
    files["A0"].write_bytes(ours)
    files["B"].write_bytes(theirs)
    exe = driver_exe()

    def driver() -> None:
        shutil.copyfile(files["A0"], files["A"])  # %A is overwritten each run
        proc = subprocess.run(
            [exe, "merge-driver", "--ancestor", str(files["O"]), "--current", str(files["A"]),
             "--other", str(files["B"]), "--marker-size", "7", "--path", "state/events.jsonl"],
            capture_output=True,
        )
        if proc.returncode != 0:
            raise SystemExit(f"driver failed: {proc.stderr.decode(errors='replace')}")

    def copy_only() -> None:
        shutil.copyfile(files["A0"], files["A"])

    def merge_file() -> None:
        subprocess.run(
            ["git", "merge-file", "-p", "-L", "ours", "-L", "base", "-L", "theirs",
             str(files["A0"]), str(files["O"]), str(files["B"])],
            capture_output=True,
        )

    return {
        "label": label,
        "n": n,
        "out_lines": total,
        "bytes": len(ours) + len(theirs),
        "in_process": median_time(lambda: merge_jsonl(base, ours, theirs), repeat),
        "driver": median_time(driver, repeat) - median_time(copy_only, repeat),
        "merge_file": median_time(merge_file, repeat),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per timing (median)")
    args = parser.parse_args()
    cases = [
        ("10k", 10_000, False),
        ("50k", 50_000, False),
        ("50k-overlap", 50_000, True),
        ("100k", 100_000, False),
    ]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, n, overlap in cases:
            rows.append(run_case(label, n, overlap, args.repeat, pathlib.Path(tmp)))

    git_version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout
    print(f"git {git_version.split()[-1]}, "
          f"python {sys.version.split()[0]}, median of {args.repeat}")
    print("case: base N lines, each side appends N (overlap: half of theirs is ours' too)")
    header = (f"{'case':<12} {'out lines':>9} {'MB in':>6} {'merge_jsonl':>12} {'driver':>9} "
              f"{'merge-file':>10} {'us/line':>8} {'driver/mf':>9}")
    print(header)
    for r in rows:
        per_line = r["in_process"] / r["out_lines"] * 1e6
        print(f"{r['label']:<12} {r['out_lines']:>9,} {r['bytes'] / 1e6:>6.1f} "
              f"{r['in_process']:>11.3f}s {r['driver']:>8.3f}s {r['merge_file']:>9.3f}s "
              f"{per_line:>8.2f} {r['driver'] / r['merge_file']:>8.2f}x")
    small = next(r for r in rows if r["label"] == "10k")
    big = next(r for r in rows if r["label"] == "100k")
    for key, name in (("in_process", "merge_jsonl"), ("driver", "driver"),
                      ("merge_file", "git merge-file")):
        per = (big[key] / big["out_lines"]) / (small[key] / small["out_lines"])
        print(f"scaling 100k/10k, {name}: {big[key] / small[key]:.1f}x the time for 10x the "
              f"lines; time per line ratio {per:.2f} (1.00 = linear)")


if __name__ == "__main__":
    main()
