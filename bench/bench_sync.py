"""Benchmark `git gasp sync` with many clones pushing to one remote at once.

Run: ``.venv/bin/python bench/bench_sync.py [--clones 8] [--rounds 20] [--quick]``

A bare remote with the server's pre-receive (`git gasp install-hooks --server`) and
receive.denyNonFastForwards; N plain clones of it. Each clone, for R rounds, appends a
goal pair, commits, and runs the installed `git gasp sync --json` with the default
settings; all clones at once (`tests/testing/syncload.py`, the harness of
tests/sync/test_sync_concurrency.py). Baselines measured in the same run: one clone
doing its R rounds alone (no contention: the cost of a sync that never retries), and
the same clone committing and running a plain `git push` instead (the transport and
the server hook only). Prints pushes per second, retries per push, the exit codes and
the ratios; checks that every event arrived exactly once. Asserts nothing about time.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.testing.events import goal_pair  # noqa: E402
from tests.testing.syncload import (  # noqa: E402
    LOG,
    make_clones,
    make_remote,
    only_extended,
    remote_ids,
    run_clones,
)

ARGS: tuple[str, ...] = ()  # the default settings (retry on time, 120 s of waits)


def _env(home: Path) -> None:
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    for key in [k for k in os.environ if k.startswith("GIT_")]:
        del os.environ[key]
    os.environ.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
                      GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="bench",
                      GIT_AUTHOR_EMAIL="bench@example.com", GIT_COMMITTER_NAME="bench",
                      GIT_COMMITTER_EMAIL="bench@example.com")
    (home / ".gitconfig").write_text("[init]\n\tdefaultBranch = main\n")


def _seed(base: Path) -> Path:
    subprocess.run(["git", "gasp", "init", "seed", "--agent-id", "bench"], cwd=base,
                   check=True, capture_output=True)
    return base / "seed"


def _plain_pushes(base: Path, rounds: int) -> float:
    """Seconds for one clone to commit and `git push` `rounds` times (no sync)."""
    where = base / "plain"
    where.mkdir()
    remote = make_remote(where, _seed(where))
    (clone,) = make_clones(where, str(remote), 1)
    start = time.monotonic()
    for r in range(rounds):
        with open(clone / LOG, "ab") as fh:
            fh.write(goal_pair(500_000 + r))
        subprocess.run(["git", "commit", "-q", "--no-verify", "-am", f"r{r}"], cwd=clone,
                       check=True)
        subprocess.run(["git", "push", "-q"], cwd=clone, check=True, capture_output=True)
    return time.monotonic() - start


def _scenario(base: Path, name: str, clones: int, rounds: int):
    where = base / name
    where.mkdir()
    remote = make_remote(where, _seed(where))
    run = run_clones(make_clones(where, str(remote), clones), rounds, *ARGS)
    ids = remote_ids(remote)
    ok = (len(ids) == len(set(ids)) and set(run.appended) <= set(ids)
          and not only_extended(remote) and 3 not in run.codes and not run.errors)
    return run, ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clones", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="2 clones, 3 rounds")
    opts = parser.parse_args()
    clones, rounds = (2, 3) if opts.quick else (opts.clones, opts.rounds)
    with tempfile.TemporaryDirectory(prefix="gasp-bench-sync-") as tmp:
        base = Path(tmp)
        (base / "home").mkdir()
        _env(base / "home")
        plain_s = _plain_pushes(base, rounds)
        alone, alone_ok = _scenario(base, "alone", 1, rounds)
        many, many_ok = _scenario(base, "many", clones, rounds)
    plain_rate = rounds / plain_s
    alone_rate = alone.pushes / alone.seconds
    many_rate = many.pushes / many.seconds
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    print(f"plain git push, 1 clone x {rounds}: {plain_s:.1f} s, {plain_rate:.2f} pushes/s")
    print(f"git gasp sync,  1 clone x {rounds}: {alone.figures()}")
    print(f"git gasp sync, {clones} clones x {rounds}: {many.figures()}")
    print(f"ratios: sync alone / plain push = {alone_rate / plain_rate:.2f}x the rate; "
          f"{clones} clones / alone = {many_rate / alone_rate:.2f}x the rate; "
          f"retries per push {many.retries / max(1, many.pushes):.2f}")
    print(f"every event exactly once, only fast-forwards, no internal error: "
          f"{'yes' if alone_ok and many_ok else 'NO'}")
    if many.errors:
        print("errors:", *many.errors[:5], sep="\n  ")


if __name__ == "__main__":
    main()
