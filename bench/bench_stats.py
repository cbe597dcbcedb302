"""Benchmark `git gasp stats` on a 10,000-file tree with a 100,000-event log against `git
blame --porcelain` summed over the same files (issue 47: at most 3x). Prints; never
asserts.

    .venv/bin/python bench/bench_stats.py [--files N] [--events N] [--commits N]
                                          [--repeat R] [--quick]

Builds (seeded, in a temp dir) a project beside its state (`git init`, then `git gasp
init --branch`): --files files of 5 to 40 lines each, added over --commits commits (one
`git fast-import`), a tenth of them edited again in later commits, half the commits
pinned by a patch of its own run (goal, model call, patch, eval, decision, through the
runtime), and the rest of --events events from bench/repos.py's seeded generator (goals,
runs with model and tool calls, patches, evals, decisions) appended to the state's log.
Then, round robin in the same run, medians of --repeat:

  (a) `git blame --porcelain HEAD -- FILE` for every file of the tree, one process
      each, in turn: what `stats` runs for each file, at the revision it counts
      (without one git blames the work tree's file, a read and an index lookup more);
      started by `xargs -0 -n1` (from this large Python process each fork costs more),
      with LC_ALL=C as `git gasp` runs git (base/git.py)
  (b) `git gasp stats --json`, the installed command as a user runs it (Python's start,
      the fold of the whole log and the count of its runs included)

and prints (b)/(a) (target <= 3x) and the line counts `stats` found. `--quick`: 1,000
files, 10,000 events, 40 commits.
"""

from __future__ import annotations

import argparse
import json
import os
import random
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

from repos import Gen, Stream  # noqa: E402

from git_gasp.protocol.envelope import serialize  # noqa: E402
from git_gasp.runtime.state import AgentState  # noqa: E402
from git_gasp.store.location import require_root  # noqa: E402

SEED = 47_47
TARGET = 3.0
ENV = {"GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
       "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}


def _git(cwd: Path, *args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(["git", *args], cwd=cwd, input=data, check=True,
                          capture_output=True, env={**os.environ, **ENV}).stdout


def _file(rng: random.Random, n: int, edit: int = -1) -> bytes:
    lines = [f"value_{n}_{i} = compute({rng.randint(0, 10**6)})\n"
             for i in range(rng.randint(5, 40))]
    if edit >= 0:
        at = rng.randrange(len(lines))
        lines[at:at + 2] = [f"edited_{n} = {edit}  # commit {edit}\n"]
    return "".join(lines).encode()


def build(where: Path, files: int, commits: int, events: int) -> Path:
    """The project (its state beside, on gasp/state); returns the project's path."""
    rng = random.Random(SEED)
    repo = where / "project"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    start = int(time.time()) - 30 * 86400  # a month ago: each patch explains its commit
    stream, per = [], -(-files // max(commits - commits // 4, 1))
    added = 0
    for n in range(commits):
        body = b""
        if added < files:  # the first commits add the files, the last quarter edits some
            for k in range(added, min(added + per, files)):
                data = _file(rng, k)
                body += b"M 100644 inline src/d%03d/f%05d.py\ndata %d\n%s\n" % (
                    k // 100, k, len(data), data)
            added = min(added + per, files)
        else:
            for _ in range(max(files // 10 // max(commits // 4, 1), 1)):
                k = rng.randrange(files)
                data = _file(random.Random(SEED + k), k, edit=n)
                body += b"M 100644 inline src/d%03d/f%05d.py\ndata %d\n%s\n" % (
                    k // 100, k, len(data), data)
        msg = f"commit {n}\n".encode()
        stream.append(b"commit refs/heads/main\n"
                      + b"author Bench <bench@example.invalid> %d +0000\n" % (start + n)
                      + b"committer Bench <bench@example.invalid> %d +0000\n" % (start + n)
                      + b"data %d\n%s" % (len(msg), msg) + body)
    _git(repo, "fast-import", "--quiet", data=b"".join(stream))
    _git(repo, "checkout", "-q", "-f", "main")
    subprocess.run([sys.executable, "-m", "git_gasp.cli.main", "init", "--branch"], cwd=repo,
                   check=True, capture_output=True, env={**os.environ, **ENV})
    state = Path(require_root(str(repo)))
    shas = _git(repo, "rev-list", "--reverse", "main").decode().split()
    generated, _runs = Stream(Gen(SEED, 0.6)).take(max(events - 6 * len(shas), 0))
    with open(state / "state" / "events.jsonl", "ab") as fh:
        fh.write(b"".join(serialize(e) for e in generated))
    with AgentState.open(state, "bench", fsync=False) as st:
        if st.run is not None:  # the generated log's last run, left open
            st.finish_run("completed")
        for n, sha in enumerate(shas):
            if n % 2:
                continue
            goal = st.record_goal(f"goal {n}")
            st.start_run(f"commit {n}", goal=goal,
                         metadata={"source": {"agent": ("claude-code", "codex")[n % 4 // 2]}})
            call = st.record_model_call(("claude-opus-4-5", "gpt-5")[n % 4 // 2])
            st.finish_model_call(call, output_summary="ok",
                                 usage={"input_tokens": 900, "output_tokens": 80})
            patch = st.propose_patch(f"commit {n}", advances=goal, commit=sha)
            st.record_eval("pytest", "Passed" if n % 3 else "Failed", validates=patch)
            st.record_decision("Approved" if n % 3 else "Rejected", "bench", patch=patch)
            st.finish_run("completed")
    return repo


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--commits", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="1,000 files, 10,000 events.")
    args = ap.parse_args()
    if args.quick:
        args.files, args.events, args.commits = 1_000, 10_000, 40
    exe = str(Path(sys.executable).with_name("git-gasp"))
    with tempfile.TemporaryDirectory(prefix="bench-stats-") as tmp:
        t0 = time.perf_counter()
        repo = build(Path(tmp), args.files, args.commits, args.events)
        names = _git(repo, "ls-tree", "-r", "-z", "--name-only", "HEAD").split(b"\0")
        names = [n.decode() for n in names if n]
        state = Path(require_root(str(repo)))
        n_events = (state / "state" / "events.jsonl").read_bytes().count(b"\n")
        print(f"built in {time.perf_counter() - t0:.1f} s: {len(names)} files, "
              f"{n_events} events")
        env = {**os.environ, **ENV}

        listing = b"".join(n.encode() + b"\0" for n in names)

        def git_blames() -> float:  # started by xargs, a small process: no fork of ours
            t = time.perf_counter()
            subprocess.run(["xargs", "-0", "-n1", "git", "blame", "--porcelain", "HEAD", "--"],
                           input=listing, cwd=repo, check=True, capture_output=True,
                           env=dict(env, LC_ALL="C"))  # as base/git.py runs git
            return time.perf_counter() - t

        found: dict = {}

        def stats() -> float:
            t = time.perf_counter()
            proc = subprocess.run([exe, "stats", "--json"], cwd=repo, check=True,
                                  capture_output=True, env=env)
            took = time.perf_counter() - t
            found.update(json.loads(proc.stdout))
            return took

        a, b = [], []
        for _ in range(args.repeat):  # round robin: background load hits both
            a.append(git_blames())
            b.append(stats())
        ma, mb = statistics.median(a), statistics.median(b)
        lines = found["lines"]
        print(f"stats: {lines['total']} lines, {lines['agent']} agent, {lines['human']} "
              f"human; {found['activity']['sessions']} sessions")
        print(f"(a) git blame --porcelain, every file  {ma:8.2f} s   (rounds: "
              f"{', '.join(f'{x:.2f}' for x in a)})")
        print(f"(b) git gasp stats --json              {mb:8.2f} s   (rounds: "
              f"{', '.join(f'{x:.2f}' for x in b)})")
        print(f"(b)/(a) = {mb / ma:.2f}x (target <= {TARGET:.0f}x)")


if __name__ == "__main__":
    main()
