"""Benchmark check 4: git-gasp's DAG walker vs the reference checker's method.

Run: ``.venv/bin/python bench/bench_check4.py [--commits N] [--merges N] [--profile]``

Builds two repos with real git (``git fast-import``) in a temp dir:

(a) linear: N commits, each appending 20 canonical-looking events (~250 bytes)
    to state/events.jsonl;
(b) merges: N rounds of (main appends, a side branch appends, merge with union
    content), i.e. N merge commits.

Baseline = the reference checker's method, run for real (bench/baselines.py): ``git
rev-list --reverse --full-history HEAD -- state/events.jsonl`` then one ``git show
<commit>:state/events.jsonl`` per listed commit, each compared by prefix with the one
before. Ours = ``check_history(use_cache=False)`` cold, and a re-check with the cache
after one more commit (median of --repeat). Prints seconds and ratios; asserts nothing
about time (it does assert both checks pass).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pathlib
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator

from baselines import reference_check
from benchlog import event

from git_gasp.conformance.history.check import check_history

LOG = "state/events.jsonl"
LINES_PER_COMMIT = 20
WHEN = 1767225600  # 2026-01-01T00:00:00Z


def batch(start: int) -> bytes:
    return b"".join(event(n) for n in range(start, start + LINES_PER_COMMIT))


def git(cwd: pathlib.Path, *args: str, input: bytes | None = None) -> bytes:
    proc = subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True)
    if proc.returncode:
        raise SystemExit(f"git {' '.join(args)} failed: {proc.stderr.decode(errors='replace')}")
    return proc.stdout


class Stream:
    """Writes a fast-import stream straight into a running `git fast-import`."""

    def __init__(self, repo: pathlib.Path) -> None:
        self.proc = subprocess.Popen(
            ["git", "fast-import", "--quiet"], cwd=repo, stdin=subprocess.PIPE
        )
        self.out = self.proc.stdin
        self.mark = 0

    def commit(self, branch: str, content: bytes, parents: list[int], msg: str) -> int:
        self.mark += 1
        w = self.out.write
        w(b"commit refs/heads/%s\nmark :%d\n" % (branch.encode(), self.mark))
        w(b"committer Bench <bench@example.com> %d +0000\n" % (WHEN + self.mark))
        w(b"data %d\n%s\n" % (len(msg), msg.encode()))
        if parents:
            w(b"from :%d\n" % parents[0])
        for extra in parents[1:]:
            w(b"merge :%d\n" % extra)
        w(b"M 100644 inline %s\ndata %d\n" % (LOG.encode(), len(content)))
        w(content)
        w(b"\n")
        return self.mark

    def close(self) -> None:
        self.out.close()
        if self.proc.wait():
            raise SystemExit("git fast-import failed")


def init(root: pathlib.Path) -> None:
    root.mkdir()
    git(root, "init", "-q", "-b", "main")


def checkout(root: pathlib.Path) -> None:
    git(root, "reset", "-q", "--hard", "main")


def build_linear(root: pathlib.Path, commits: int) -> None:
    init(root)
    stream = Stream(root)
    content, parent = b"", []
    for i in range(commits):
        content += batch(i * LINES_PER_COMMIT)
        parent = [stream.commit("main", content, parent, f"run {i}")]
    stream.close()
    checkout(root)


def build_merges(root: pathlib.Path, merges: int) -> None:
    init(root)
    stream = Stream(root)
    content = batch(0)
    tip = stream.commit("main", content, [], "root")
    n = LINES_PER_COMMIT
    for i in range(merges):
        ours, theirs = batch(n), batch(n + LINES_PER_COMMIT)
        n += 2 * LINES_PER_COMMIT
        side = stream.commit("side", content + theirs, [tip], f"side {i}")
        main = stream.commit("main", content + ours, [tip], f"main {i}")
        content = content + ours + theirs
        tip = stream.commit("main", content, [main, side], f"merge {i}")
    stream.close()
    checkout(root)


def baseline(root: pathlib.Path) -> int:
    """The reference checker's method (bench/baselines.py): rev-list, then one
    `git show <commit>:<log>` per commit, prefix compare."""
    return reference_check(root, [LOG])[0].listed


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def add_one_commit(root: pathlib.Path, start: int) -> None:
    with open(root / LOG, "ab") as f:
        f.write(batch(start))
    git(root, "commit", "-q", "-am", "one more run")


def bench(name: str, root: pathlib.Path, profile: bool, repeat: int) -> Iterator[str]:
    n_commits = int(git(root, "rev-list", "--count", "HEAD"))
    size = (root / LOG).stat().st_size
    t_base, listed = timed(lambda: baseline(root))
    colds = []
    for _ in range(repeat):
        t_cold, cold = timed(lambda: check_history(root, use_cache=False))
        assert not cold.failures, cold.failures
        colds.append(t_cold)
    check_history(root)  # fill the cache
    warms = []
    for i in range(repeat):
        add_one_commit(root, 10**7 + i * LINES_PER_COMMIT)
        t_warm, warm = timed(lambda: check_history(root))
        assert not warm.failures and warm.commits_walked == 1, warm
        warms.append(t_warm)
    t_cold, t_warm = statistics.median(colds), statistics.median(warms)
    yield (f"{name}: {n_commits} commits ({listed} listed by rev-list), "
           f"final log {size / 1e6:.1f} MB")
    yield f"  baseline (rev-list + git show per commit): {t_base:8.3f} s"
    yield (f"  check_history cold (no cache):             {t_cold:8.3f} s"
           f"   walked {cold.commits_walked}  (median of {repeat})")
    yield (f"  check_history warm (cache, +1 commit):     {t_warm:8.3f} s"
           f"   walked {warm.commits_walked}  (median of {repeat})")
    yield f"  baseline / cold = {t_base / t_cold:6.1f}x    cold / warm = {t_cold / t_warm:6.1f}x"
    if profile:
        prof = cProfile.Profile()
        prof.runcall(check_history, root, use_cache=False)
        pstats.Stats(prof, stream=sys.stdout).sort_stats("cumulative").print_stats(15)


def hermetic_env(home: pathlib.Path) -> None:
    os.environ.update({
        "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "XDG_CONFIG_HOME": str(home / ".c"),
        "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
        "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.com",
    })
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        os.environ.pop(var, None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=1000, help="linear repo size")
    parser.add_argument("--merges", type=int, default=200, help="merge commits in repo (b)")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each timed check")
    parser.add_argument("--profile", action="store_true", help="cProfile the cold checks")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-check4-") as tmp:
        base = pathlib.Path(tmp)
        (base / "home").mkdir()
        hermetic_env(base / "home")
        t_build, _ = timed(lambda: build_linear(base / "linear", args.commits))
        print(f"built linear repo in {t_build:.1f} s", flush=True)
        for line in bench("(a) linear", base / "linear", args.profile, args.repeat):
            print(line, flush=True)
        t_build, _ = timed(lambda: build_merges(base / "merges", args.merges))
        print(f"built merge repo in {t_build:.1f} s", flush=True)
        for line in bench("(b) merges", base / "merges", args.profile, args.repeat):
            print(line, flush=True)


if __name__ == "__main__":
    main()
