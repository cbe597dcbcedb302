"""Benchmark the server's pre-receive hook: `git push` of K appended events onto a big
log into a bare repository with no hook, with our hook, and with our hook ``--check``
(checks 1, 5 and 7 on the appended lines), measured round-robin in one run.

Run: ``.venv/bin/python bench/bench_receive.py [--events N] [--append K] [--runs R]
[--baseline DIR] [--quick]``

Builds an agent repository (``git gasp init``) whose log holds N conformant events
(default 100,000, as goal.created + ops pairs) in one commit, packed by ``git gc``,
and three bare clones of it: ``plain`` (no hook), ``hook`` (``install-hooks
--server``) and ``check`` (``install-hooks --server --check``). Each round appends K
events (default 20) in one commit and pushes it to the three remotes in rotating
order. The first --check push has no saved log state in the bare repository: it feeds
the whole old log through the rules (and saves the state), so it is timed apart
("cold"), as are R more pushes with the saved states deleted first; the later pushes
resume from the state the previous push saved and feed only their own lines. The
hook runs as after a pip install (``installed.interpreter``: a fresh virtualenv, no
editable-install finder). Then (``--refs M``, default 50) one push of M new branches
at once, each one commit of K events, onto a 1,000-event log (a big log would make it
time git's packing of M big blobs). Prints medians, ratios against the plain push of
the same run, and the hook's own time (push minus the plain push); asserts only that
the pushes succeed. ``--baseline DIR``: two more bare clones, ``base-hook`` and
``base-check``, get the hooks of the checkout DIR (e.g. the code before a change),
pushed to in the same rotation, so both meet the same machine load.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))

from installed import interpreter  # noqa: E402

from tests.testing.events import goal_pair  # noqa: E402

LOG = "state/events.jsonl"
REMOTES = ["plain", "hook", "check"]
SMALL = 1_000  # events of the log the many-branch push builds on
MANY_RUNS = 3


def run(cwd: pathlib.Path, *argv: str, env: dict | None = None) -> bytes:
    proc = subprocess.run(list(argv), cwd=cwd, capture_output=True, env=env)
    if proc.returncode:
        raise SystemExit(f"{' '.join(argv)} failed: {proc.stderr.decode(errors='replace')}")
    return proc.stdout


def environment(home: pathlib.Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME=str(home), GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="bench",
               GIT_AUTHOR_EMAIL="bench@example.com", GIT_COMMITTER_NAME="bench",
               GIT_COMMITTER_EMAIL="bench@example.com")
    return env


def build(base: pathlib.Path, cli: list[str], env: dict, events: int,
          baseline: list[str] | None = None) -> pathlib.Path:
    base.mkdir(exist_ok=True)
    agent = base / "agent"
    run(base, *cli, "init", str(agent), "--agent-id", "bench", env=env)
    with open(agent / LOG, "ab") as fh:
        for n in range(events // 2):
            fh.write(goal_pair(n))
    run(agent, "git", "add", "-A", env=env)
    run(agent, "git", "commit", "-q", "--no-verify", "-m", "a big log", env=env)
    run(agent, "git", "gc", "-q", env=env)
    for name in REMOTES:
        run(base, "git", "clone", "-q", "--bare", "--no-local", str(agent),
            str(base / f"{name}.git"), env=env)
    run(base / "hook.git", *cli, "install-hooks", "--server", env=env)
    run(base / "check.git", *cli, "install-hooks", "--server", "--check", env=env)
    if baseline is not None:
        run(base / "base-hook.git", *baseline, "install-hooks", "--server", env=env)
        run(base / "base-check.git", *baseline, "install-hooks", "--server", "--check", env=env)
    return agent


class Pusher:
    """Appends K events per commit and times `git push` to a remote."""

    def __init__(self, agent: pathlib.Path, base: pathlib.Path, env: dict, k: int) -> None:
        self.agent, self.base, self.env, self.k = agent, base, env, k
        self.next = 10 ** 6

    def commit(self) -> None:
        with open(self.agent / LOG, "ab") as fh:
            for _ in range(self.k // 2):
                fh.write(goal_pair(self.next))
                self.next += 1
        run(self.agent, "git", "commit", "-q", "--no-verify", "-am", "append", env=self.env)

    def push(self, name: str, *specs: str) -> float:
        start = time.perf_counter()
        run(self.agent, "git", "push", "-q", str(self.base / f"{name}.git"),
            *(specs or ("HEAD:main",)), env=self.env)
        return time.perf_counter() - start

    def branches(self, count: int, tag: str) -> list[str]:
        """`count` new branches off HEAD, each one commit of K events (HEAD unchanged)."""
        head = run(self.agent, "git", "rev-parse", "HEAD", env=self.env).strip().decode()
        specs = []
        for n in range(count):
            self.commit()
            run(self.agent, "git", "branch", "-f", f"{tag}{n}", "HEAD", env=self.env)
            specs.append(f"refs/heads/{tag}{n}")
            run(self.agent, "git", "reset", "-q", "--hard", head, env=self.env)
        return specs


def fmt(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms" if seconds < 10 else f"{seconds:,.1f} s"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--append", type=int, default=20)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--refs", type=int, default=50,
                    help="then one push of this many new branches (0: skip)")
    ap.add_argument("--baseline", type=pathlib.Path, default=None,
                    help="also time the hooks of this checkout, interleaved")
    ap.add_argument("--quick", action="store_true", help="10,000 events, 3 runs")
    args = ap.parse_args()
    if args.baseline is not None:
        REMOTES.extend(["base-hook", "base-check"])
    if args.quick:
        args.events, args.runs = 10_000, 3
    base = pathlib.Path(tempfile.mkdtemp(prefix="bench-receive-"))
    try:
        home = base / "home"
        home.mkdir()
        env = environment(home)
        cli = interpreter(base, "venv-installed", HERE)
        bcli = (interpreter(base, "venv-baseline", args.baseline.resolve())
                if args.baseline is not None else None)
        t0 = time.perf_counter()
        agent = build(base, cli, env, args.events, bcli)
        size = (agent / LOG).stat().st_size
        print(f"log: {args.events:,} events, {size / 1e6:.1f} MB; built in "
              f"{time.perf_counter() - t0:.1f} s; pushes of {args.append} events in one commit")
        pusher = Pusher(agent, base, env, args.append)
        times: dict[str, list[float]] = {name: [] for name in REMOTES}
        checks = [name for name in REMOTES if name.endswith("check")]
        colds: dict[str, list[float]] = {name: [] for name in checks}
        cold = colds["check"]
        pusher.commit()
        for name in REMOTES:  # the first push: --check has no saved state yet
            (colds[name] if name in colds else times[name]).append(pusher.push(name))
        n = len(REMOTES)
        for r in range(args.runs):
            pusher.commit()
            order = REMOTES[r % n:] + REMOTES[:r % n]
            for name in order:
                times[name].append(pusher.push(name))
        for _ in range(args.runs):
            pusher.commit()
            for name in checks:
                shutil.rmtree(base / f"{name}.git" / "gasp", ignore_errors=True)
                colds[name].append(pusher.push(name))
        plain = statistics.median(times["plain"])
        rows = [("no hook (`git push`)", times["plain"]), ("hook", times["hook"]),
                ("hook --check (resumed)", times["check"]),
                ("hook --check (cold: no saved state)", cold)]
        if args.baseline is not None:
            rows += [("baseline hook", times["base-hook"]),
                     ("baseline hook --check (resumed)", times["base-check"]),
                     ("baseline hook --check (cold)", colds["base-check"])]
        print()
        print("| push into | median | min | vs no hook | hook's own time |")
        print("|---|---|---|---|---|")
        for label, values in rows:
            med = statistics.median(values)
            own = "" if values is times["plain"] else fmt(med - plain)
            print(f"| {label} | {fmt(med)} | {fmt(min(values))} | {med / plain:.2f}x | {own} |")
        print(f"\n({len(times['plain'])} pushes each, {len(cold)} cold; medians)")
        if args.baseline is not None:
            for mine, theirs in (("hook", "base-hook"), ("check", "base-check")):
                own = statistics.median(times[mine]) - plain
                base_own = statistics.median(times[theirs]) - plain
                ratio = statistics.median(times[mine]) / statistics.median(times[theirs])
                print(f"{mine}: this/baseline push {ratio:.2f}x, "
                      f"hook's own time {own / base_own:.2f}x")
        if args.refs:  # on a small log: git's own packing of big blobs would dominate
            small = base / "small"
            pusher = Pusher(build(small, cli, env, SMALL, bcli), small, env, args.append)
            runs: dict[str, list[float]] = {name: [] for name in REMOTES}
            for r in range(MANY_RUNS):
                for name in REMOTES[r % n:] + REMOTES[:r % n]:
                    specs = pusher.branches(args.refs, f"{name}-{r}-")
                    runs[name].append(pusher.push(name, *specs))
            many = {name: statistics.median(v) for name, v in runs.items()}
            print(f"\none push of {args.refs} new branches onto a {SMALL:,}-event log (each "
                  f"one commit of {args.append} events; median of {MANY_RUNS}):\n")
            print("| push into | time | vs no hook |")
            print("|---|---|---|")
            for name in REMOTES:
                print(f"| {name} | {fmt(many[name])} | {many[name] / many['plain']:.2f}x |")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
