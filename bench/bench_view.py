"""Benchmark `git gasp view` on a 100,000-event log against `git gasp fold --json`.

    .venv/bin/python bench/bench_view.py [--events N] [--repeat R] [--browser] [--dev-install]

Builds an agent repository (`git gasp init`, then a log of N runtime-shaped events from
bench/repos.py's seeded generator: goals, runs with model and tool calls, patches,
evals, decisions, observations, every domain event paired with its ops), and times,
round-robin in the same run (medians of R), the installed CLI as a user runs it:
(a) `git gasp fold --json` (output discarded) and (b) `git gasp view -o FILE --no-open`.
It prints (b)/(a) (issue 28's target: at most 3x) and the page's size in MB (target:
at most 25 MB), and how much of the log the page holds. With `--browser` it also opens
the page in headless Chromium and prints the time the page's script took until it was
ready (`data-ready-ms`, performance.now() at the end of its start-up). The CLI runs as
pip leaves it (bench/installed.py), or this venv's with `--dev-install`.
Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
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

from installed import installed_bin  # noqa: E402
from repos import Gen, Stream  # noqa: E402

from git_gasp.protocol.envelope import serialize  # noqa: E402

SEED = 28_28
TARGET_RATIO = 3.0
TARGET_MB = 25.0


def build(repo: Path, n_events: int, env: dict[str, str]) -> int:
    """An agent repo at `repo` whose log holds `git gasp init`'s events and `n_events`
    generated ones; the log's size in bytes."""
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, env=env)
    subprocess.run(["git", "gasp", "init", "--agent-id", "evolve"], cwd=repo, check=True,
                   env=env, capture_output=True)
    events, _runs = Stream(Gen(SEED, 0.6)).take(n_events)
    log = repo / "state" / "events.jsonl"
    with open(log, "ab") as fh:
        fh.write(b"".join(serialize(e) for e in events[:n_events]))
    return log.stat().st_size


def cli_env(tmp: Path, bin_dir: Path) -> dict[str, str]:
    """The environment the timed CLI runs in: no GIT_ variable of the caller's, a bench
    identity, byte code cached under `tmp`, `bin_dir`'s `git-gasp` first on PATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.com",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.com",
               PYTHONPYCACHEPREFIX=str(tmp / "pycache"))
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return env


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    """(seconds, stdout) of `cmd`; fold's JSON goes to /dev/null, as `> /dev/null`."""
    keep = cmd[2] == "view"
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, text=True, stderr=subprocess.PIPE,
                          stdout=subprocess.PIPE if keep else subprocess.DEVNULL)
    took = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    return took, proc.stdout if keep else ""


def browser_ready_ms(page: Path, tmp: Path) -> str:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        return "no chromium here"
    proc = subprocess.run(
        [chromium, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
         f"--user-data-dir={tmp / 'chromium'}", "--virtual-time-budget=20000", "--dump-dom",
         page.as_uri()], capture_output=True, text=True, timeout=600)
    m = re.search(r'data-ready-ms="(\d+)"', proc.stdout)
    errors = re.search(r'data-errors="(\d+)"', proc.stdout)
    if m is None:
        return "the page did not come up"
    return f"{m.group(1)} ms" + (f" ({errors.group(1)} script errors)" if errors else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--browser", action="store_true", help="also time the page in Chromium")
    ap.add_argument("--dev-install", action="store_true", help="this venv's git-gasp")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-view-") as tmp_name:
        tmp = Path(tmp_name)
        bin_dir = Path(sys.executable).parent if args.dev_install else installed_bin(tmp, ROOT)
        env = cli_env(tmp, bin_dir)
        repo = tmp / "agent"
        size = build(repo, args.events, env)
        page = tmp / "view.html"
        fold_cmd = ["git", "gasp", "fold", "--json"]
        view_cmd = ["git", "gasp", "view", "-o", str(page), "--no-open"]
        timed(fold_cmd, repo, env)  # warm the byte-code caches and the page cache
        folds, views, said = [], [], ""
        for _ in range(args.repeat):
            folds.append(timed(fold_cmd, repo, env)[0])
            took, said = timed(view_cmd, repo, env)
            views.append(took)
        fold_s, view_s = statistics.median(folds), statistics.median(views)
        mb = page.stat().st_size / 1e6
        print(f"log: {args.events:,} events ({size / 1e6:.1f} MB); CLI: "
              f"{'this venv' if args.dev_install else 'installed as pip leaves it'}")
        print(f"(a) git gasp fold --json      {fold_s:6.2f} s  (median of {args.repeat})")
        print(f"(b) git gasp view -o --no-open {view_s:6.2f} s  (median of {args.repeat})")
        print(f"(b)/(a) = {view_s / fold_s:.2f}x   (target <= {TARGET_RATIO:g}x)")
        print(f"page: {mb:.1f} MB   (target <= {TARGET_MB:g} MB)")
        print(f"view said: {said.strip()}")
        if args.browser:
            print(f"page ready in headless Chromium: {browser_ready_ms(page, tmp)}")


if __name__ == "__main__":
    main()
