"""Check 4 through the object reader, this checkout against another (``--against DIR``,
e.g. ``git archive main`` unpacked), interleaved in one run, on packed histories.

Run: ``.venv/bin/python bench/bench_odb.py [--against DIR] [--sizes 40 800 640]
[--repeat N] [--profile]``

Builds, with ``git fast-import`` (bench_check4's linear history: each commit appends 20
events to state/events.jsonl) then ``git gc --aggressive``, one packed repository per
size. For each size and each checkout (a copy of the repository each, so that no cache
is shared), round by round: check 4 cold (``check_history(use_cache=False)``) and the
re-check after one new commit (the cache warm), each timed inside a fresh process of
that checkout's interpreter (``installed.interpreter``), imports excluded. Prints
medians, this/that ratios and the re-check's cost on the largest size over the
smallest (a re-check should not grow with the history). ``--profile``: this
checkout's cold check 4 on the largest size under cProfile. Asserts only that the
checks pass.
"""

from __future__ import annotations

import argparse
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile

from bench_check4 import LINES_PER_COMMIT, add_one_commit, build_linear, git, hermetic_env
from installed import interpreter

HERE = pathlib.Path(__file__).resolve().parent
TIMED = """
import sys, time
from git_gasp.conformance.history.check import check_history
t = time.perf_counter()
r = check_history(sys.argv[1], use_cache=sys.argv[2] == "warm")
print(time.perf_counter() - t, r.commits_walked, len(r.failures))
"""
PROFILED = """
import cProfile, pstats, sys
from git_gasp.conformance.history.check import check_history
prof = cProfile.Profile()
prof.runcall(check_history, sys.argv[1], use_cache=False)
pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(18)
"""


def python_of(cli: list[str]) -> str:
    return cli[0]


def timed_check(python: str, root: pathlib.Path, mode: str) -> tuple[float, int]:
    proc = subprocess.run([python, "-P", "-c", TIMED, str(root), mode], capture_output=True,
                          text=True)
    if proc.returncode:
        raise SystemExit(f"check 4 failed in {root}: {proc.stderr[-1500:]}")
    seconds, walked, failures = proc.stdout.split()
    if failures != "0":
        raise SystemExit(f"check 4 reported {failures} failures in {root}")
    return float(seconds), int(walked)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", type=pathlib.Path, default=None, metavar="DIR")
    ap.add_argument("--sizes", type=int, nargs="+", default=[40, 800, 640])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-odb-") as tmp:
        base = pathlib.Path(tmp)
        (base / "home").mkdir()
        hermetic_env(base / "home")
        checkouts = {"this": python_of(interpreter(base, "venv-this", HERE.parent))}
        if args.against is not None:
            checkouts["that"] = python_of(interpreter(base, "venv-that",
                                                      args.against.resolve()))
        results: dict[tuple[int, str, str], list[float]] = {}
        for size in args.sizes:
            src = base / f"src-{size}"
            build_linear(src, size)
            git(src, "gc", "-q", "--aggressive")
            roots = {}
            for name in checkouts:
                roots[name] = base / f"{name}-{size}"
                shutil.copytree(src, roots[name], symlinks=True)
            for name, python in checkouts.items():
                timed_check(python, roots[name], "warm")  # the cache filled once
            for i in range(args.repeat):
                for name, python in checkouts.items():
                    root = roots[name]
                    t, walked = timed_check(python, root, "cold")
                    results.setdefault((size, name, "cold"), []).append(t)
                    add_one_commit(root, 10**7 + i * LINES_PER_COMMIT)
                    t, walked = timed_check(python, root, "warm")
                    assert walked == 1, walked
                    results.setdefault((size, name, "recheck"), []).append(t)
                    git(root, "reset", "-q", "--hard", "HEAD~1")
                    timed_check(python, root, "warm")
            for name in checkouts:
                shutil.rmtree(roots[name])
            print(f"{size} commits, packed (gc --aggressive), medians of {args.repeat}:",
                  flush=True)
            for what in ("cold", "recheck"):
                row = {n: statistics.median(results[size, n, what]) for n in checkouts}
                line = f"  {what:<8} " + "   ".join(f"{n} {row[n] * 1000:8.1f} ms"
                                                   for n in checkouts)
                if "that" in row:
                    line += f"   this/that {row['this'] / row['that']:.2f}x"
                print(line, flush=True)
        small, large = min(args.sizes), max(args.sizes)
        for name in checkouts:
            ratio = (statistics.median(results[large, name, "recheck"])
                     / statistics.median(results[small, name, "recheck"]))
            print(f"re-check {large} / {small} commits ({name}): {ratio:.2f}x")
        if args.profile:
            src = base / f"src-{large}"
            proc = subprocess.run([checkouts["this"], "-P", "-c", PROFILED, str(src)],
                                  capture_output=True, text=True)
            print(proc.stdout[-6000:] or proc.stderr[-3000:])


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
