"""Benchmark the pre-commit guard: `git commit` with the hook vs without, one run.

Run: ``.venv/bin/python bench/bench_guard.py [--events N] [--append K] [--commits C] [--runs R]``

Builds (with real git, in a temp dir, isolated HOME) an agent repo whose log holds
N events (default 100,000, as goal.created + ops pairs), then times committing K
appended events (default 20): the same change committed with the guard installed
and with no hook at all. It repeats that in a second repo whose log reached the
same size over C commits (default 2,000): if the guard walked the history, its time
would grow with C; it reads only HEAD's and the index's blobs, so it does not.
The guard caches an index of the committed log per blob (under .git/gasp): the
first guarded commit ("cold") builds it; the median is over the later ones.
Prints medians and ratios; asserts only that both guarded commits succeed.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from tests.events import goal_pair  # noqa: E402

LOG = "state/events.jsonl"
GASP = str(pathlib.Path(sys.executable).with_name("git-gasp"))


def git(cwd: pathlib.Path, *args: str, input: bytes | None = None) -> bytes:
    proc = subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True)
    if proc.returncode:
        raise SystemExit(f"git {' '.join(args)} failed: {proc.stderr.decode(errors='replace')}")
    return proc.stdout


def make_repo(base: pathlib.Path, name: str, events: int, commits: int) -> pathlib.Path:
    """An initialised agent whose log holds `events` events, then `commits` - 1 more
    commits on top (they touch another file: a history walker would still visit each)."""
    subprocess.run([GASP, "init", name, "--agent-id", "bench"], cwd=base, check=True,
                   capture_output=True)
    repo = base / name
    data = b"".join(goal_pair(i) for i in range(events // 2))
    parent = git(repo, "rev-parse", "HEAD").strip()
    stream = [b"blob\nmark :1\ndata %d\n" % len(data), data, b"\n"]
    head = b"committer b <b@b> 1767225600 +0000\ndata 6\nappend\n"
    stream.append(b"commit refs/heads/main\nmark :2\n%sfrom %s\nM 100644 :1 %s\n\n"
                  % (head, parent, LOG.encode()))
    for i in range(1, commits):
        note = b"%d\n" % i
        stream.append(b"commit refs/heads/main\n%sM 100644 inline notes.txt\ndata %d\n%s\n"
                      % (head, len(note), note))
    git(repo, "fast-import", "--quiet", input=b"".join(stream))
    git(repo, "reset", "-q", "--hard", "main")
    return repo


def time_commit(repo: pathlib.Path, extra: bytes, hook: bool, runs: int) -> list[float]:
    """Seconds per `git commit` of the same appended lines (reset between runs)."""
    head = git(repo, "rev-parse", "HEAD").strip().decode()
    times = []
    for _ in range(runs):
        with open(repo / LOG, "ab") as f:
            f.write(extra)
        git(repo, "add", LOG)
        args = ["commit", "-q", "-m", "bench"] + ([] if hook else ["--no-verify"])
        start = time.perf_counter()
        proc = subprocess.run(["git", *args], cwd=repo, capture_output=True)
        times.append(time.perf_counter() - start)
        if proc.returncode:
            raise SystemExit(f"commit failed: {proc.stderr.decode(errors='replace')}")
        git(repo, "reset", "-q", "--hard", head)
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--append", type=int, default=20)
    ap.add_argument("--commits", type=int, default=2_000)
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = pathlib.Path(tmp)
        home = base / "home"
        home.mkdir()
        os.environ.update(HOME=str(home), GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="b",
                          GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b",
                          GIT_COMMITTER_EMAIL="b@b")
        (home / ".gitconfig").write_text("[init]\n\tdefaultBranch = main\n")
        extra = b"".join(goal_pair(10**7 + i) for i in range(args.append // 2))
        print(f"log: {args.events:,} events; commit appends {args.append} events; "
              f"median of {args.runs} runs")
        rows = []
        for label, commits in (("1 commit", 1), (f"{args.commits:,} commits", args.commits)):
            repo = make_repo(base, f"r{commits}", args.events, commits)
            size = (repo / LOG).stat().st_size
            n_commits = int(git(repo, "rev-list", "--count", "HEAD"))
            plain = statistics.median(time_commit(repo, extra, False, args.runs))
            for old in (repo / ".git" / "gasp").glob("guard-*.facts"):
                old.unlink()
            times = time_commit(repo, extra, True, args.runs + 1)
            guarded = statistics.median(times[1:])
            rows.append((label, n_commits, size, plain, guarded, times[0]))
        print(f"{'history':>16} {'commits':>8} {'log MB':>7} {'no hook s':>10} "
              f"{'guard s':>8} {'ratio':>6} {'cold s':>7} {'ratio':>6}")
        for label, n, size, plain, guarded, cold in rows:
            print(f"{label:>16} {n:>8} {size / 1e6:>7.1f} {plain:>10.3f} {guarded:>8.3f} "
                  f"{guarded / plain:>6.1f} {cold:>7.3f} {cold / plain:>6.1f}")
        flat = rows[1][4] / rows[0][4]
        print(f"guard time, long history / short history: {flat:.2f} "
              "(~1: the guard reads HEAD and the index, never the history)")


if __name__ == "__main__":
    main()
