"""Benchmark `git gasp blame` against `git blame --porcelain` of the same file (issue 29:
at most 1.5x, plus a cached fold). Prints; never asserts.

Builds (seeded, in a temp dir) an agent repository whose project file of --lines lines
has --commits commits of edits at random places (one `git fast-import`), every other
one pinned by a patch made in its own run (goal, model call, patch, eval, decision:
~11 events each), plus --events more events of other runs, so the fold is not trivial;
the fold is saved as the end state the writers keep (the cached fold). Then, round
robin, medians of --repeat:

  (a) `git blame --porcelain FILE` as a subprocess (what the command runs first)
  (b) `attribution.blame.blame()` in process: (a)'s git blame, its parse, the join to
      the fold's patches (and the `git log` of the patches' changes when lines are
      young enough), the render of git blame's layout; the fold already open
  (c) `AgentState.open(end_state=True)`: the cached fold (b) needs, apart
  (d) the whole `git gasp blame FILE` command as a subprocess (Python start included)

and prints (b)/(a) (target <= 1.5), (c) and (d) in milliseconds; and (b0), (b) without
following pins a rebase or squash left unreachable (`blame(rewrites=False)`, issue 47):
(b)/(b0) is what following costs on a history nothing rewrote (target ~1.0x). With
--young the last commit is unpinned and after every run, and most pins are not in the
blame, so the look-up of the pins gone from the history runs (one `git cat-file`, one
`git log`); without it no blamed commit is young enough to be a rewrite.

--ranges N (issue 43) measures imported Agent Trace ranges instead: a file of --lines
lines in one commit, N ranges over it in records of 10,000 (`import agent-trace`'s cut),
imported; then (a) against (e) `blame()` with those records (`Imported`), each line
looked up in them, and prints (e)/(a). Before the ranges were indexed, (e) tested every
range for every line: 10,000 lines x 200,000 ranges ran past 30 s.

    .venv/bin/python bench/bench_blame.py [--lines N] [--commits N] [--events N] [--repeat R]
                                          [--young]
    .venv/bin/python bench/bench_blame.py --lines 10000 --ranges 200000 [--repeat R]
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from git_gasp.attribution.blame import blame  # noqa: E402
from git_gasp.attribution.render import render  # noqa: E402
from git_gasp.attribution.trace_import import MAX_RANGES, Imported  # noqa: E402
from git_gasp.base import git  # noqa: E402
from git_gasp.cli.shortids import abbreviate_some  # noqa: E402
from git_gasp.runtime.state import AgentState  # noqa: E402

SEED = 20261203
FILE = "src/module.py"
ENV = {"GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
       "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}


def _git(cwd: Path, *args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(["git", *args], cwd=cwd, input=data, check=True,
                          capture_output=True, env={**os.environ, **ENV}).stdout


def build(where: Path, lines: int, commits: int, events: int, young: bool
          ) -> tuple[Path, list[str]]:
    """The repository and the commits of the file, oldest first."""
    rng = random.Random(SEED)
    repo = where / "agent"
    subprocess.run([sys.executable, "-m", "git_gasp.cli.main", "init", str(repo),
                    "--agent-id", "bench"], check=True, capture_output=True,
                   env={**os.environ, **ENV})
    text = [f"line {i} = compute({i}, {rng.randint(0, 10**6)})\n" for i in range(lines)]
    head = _git(repo, "rev-parse", "HEAD").decode().strip()
    # a month ago (each patch explains its own commit); --young: after the runs below
    # start, so blame walks the runs' changes too (and every unpinned commit, made while
    # some run was open, falls in the change of the next pinned one)
    start = int(time.time()) + 5 if young else int(time.time()) - 30 * 86400
    stream = []
    for n in range(commits):
        at = rng.randrange(len(text))
        span = rng.randint(1, 12)
        new = [f"edit {n}.{k}: value = {rng.random():.6f}\n" for k in range(span)]
        text[at:at + rng.randint(0, span)] = new
        body = "".join(text).encode()
        msg = f"edit {n}\n".encode()
        stream.append(b"commit refs/heads/main\nmark :%d\n" % (n + 1)
                      + b"committer Bench <bench@example.invalid> %d +0000\n" % (start + n)
                      + b"data %d\n%s" % (len(msg), msg)
                      + (b"from %s\n" % head.encode() if n == 0 else b"")
                      + b"M 100644 inline %s\ndata %d\n%s\n" % (FILE.encode(), len(body), body))
    _git(repo, "fast-import", "--quiet", data=b"".join(stream))
    _git(repo, "checkout", "-q", "-f", "main")
    shas = _git(repo, "rev-list", "--reverse", f"{head}..main").decode().split()
    with AgentState.open(repo, "bench", fsync=False) as st:
        for n, sha in enumerate(shas):
            if n % 2:
                continue
            goal = st.record_goal(f"goal {n}")
            st.start_run(f"edit {n}", goal=goal)
            call = st.record_model_call("claude-opus-4-5", provider="anthropic")
            st.finish_model_call(call, output_summary="ok")
            patch = st.propose_patch(f"edit {n}", advances=goal, commit=sha)
            ev = st.record_eval("pytest", "Passed", score=1.0, validates=patch)
            st.record_decision("Approved", "green", patch=patch)
            st.finish_run("completed")
            del ev
        st.start_run("background")
        for i in range(events // 2):
            st.record_observation(f"observation {i} of the background run")
        st.finish_run("completed")
        st.save_end_state()
    return repo, shas


def _median(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def build_traced(where: Path, lines: int, ranges: int) -> Path:
    """A repository whose FILE of `lines` lines is one commit, with `ranges` seeded
    Agent Trace ranges on it (1 to 3 lines each, half past the file's end, so most
    lines are looked up in every record) imported as observations."""
    rng = random.Random(SEED)
    repo = where / "agent"
    subprocess.run([sys.executable, "-m", "git_gasp.cli.main", "init", str(repo),
                    "--agent-id", "bench"], check=True, capture_output=True,
                   env={**os.environ, **ENV})
    (repo / FILE).parent.mkdir(parents=True, exist_ok=True)
    (repo / FILE).write_text("".join(f"line {i} = compute({i})\n" for i in range(lines)))
    _git(repo, "add", FILE)
    _git(repo, "commit", "-q", "--no-verify", "-m", "the file")
    sha = _git(repo, "rev-parse", "HEAD").decode().strip()
    records = []
    for r in range(-(-ranges // MAX_RANGES)):
        spans = []
        for _ in range(min(MAX_RANGES, ranges - r * MAX_RANGES)):
            start = rng.randint(1, 2 * lines)
            spans.append({"start_line": start, "end_line": start + rng.randint(0, 2)})
        records.append({"version": "0.1.0", "id": f"rec-{r}", "timestamp": "2026-12-01T00:00:00Z",
                        "vcs": {"type": "git", "revision": sha},
                        "files": [{"path": FILE, "conversations": [
                            {"contributor": {"type": "ai", "model_id": f"model-{r}"},
                             "ranges": spans}]}]})
    trace = where / "traces.jsonl"
    trace.write_text("".join(json.dumps(rec) + "\n" for rec in records))
    subprocess.run([sys.executable, "-m", "git_gasp.cli.main", "import", "agent-trace",
                    str(trace)], cwd=repo, check=True, capture_output=True,
                   env={**os.environ, **ENV})
    return repo


def main_ranges(args: argparse.Namespace) -> None:
    """--ranges: blame() with imported Agent Trace ranges against git blame."""
    with tempfile.TemporaryDirectory(prefix="bench-blame-") as tmp:
        t0 = time.perf_counter()
        repo = build_traced(Path(tmp), args.lines, args.ranges)
        cwd = str(repo)
        graph = AgentState.open(repo, "bench", end_state=True).graph
        print(f"built in {time.perf_counter() - t0:.1f} s: {args.lines} lines, "
              f"{args.ranges} imported ranges")

        def git_blame() -> None:
            subprocess.run(["git", "blame", "--porcelain", "--", FILE], cwd=cwd, check=True,
                           capture_output=True)

        def ours() -> None:
            rows = blame(cwd, FILE, graph, traces=Imported(graph))
            render(rows, FILE.encode(), lambda i: i)

        rows = blame(cwd, FILE, graph, traces=Imported(graph))
        print(f"{len(rows)} lines blamed, {sum(1 for r in rows if r.ai)} by an imported record")
        a, e = [], []
        for _ in range(args.repeat):  # round robin: background load hits both
            a.append(_median(git_blame, 1))
            e.append(_median(ours, 1))
        ma, me = (statistics.median(x) * 1000 for x in (a, e))
        print(f"(a) git blame --porcelain        {ma:8.1f} ms")
        print(f"(e) blame() with imported ranges {me:8.1f} ms   (e)/(a) = {me / ma:.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lines", type=int, default=3000)
    ap.add_argument("--commits", type=int, default=400)
    ap.add_argument("--events", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--young", action="store_true",
                    help="Commits made after the runs started (walks the runs' changes).")
    ap.add_argument("--ranges", type=int, default=0,
                    help="Measure N imported Agent Trace ranges on one commit instead.")
    args = ap.parse_args()
    if args.ranges:
        main_ranges(args)
        return
    with tempfile.TemporaryDirectory(prefix="bench-blame-") as tmp:
        t0 = time.perf_counter()
        repo, shas = build(Path(tmp), args.lines, args.commits, args.events,
                           args.young)
        cwd = str(repo)
        state = AgentState.open(repo, "bench", end_state=True)
        graph = state.graph
        print(f"built in {time.perf_counter() - t0:.1f} s: {args.lines} lines, {len(shas)} "
              f"commits ({len(shas) // 2 + len(shas) % 2} pinned), "
              f"{state.store.line_count} events, {graph.node_count()} nodes")

        def git_blame() -> None:
            subprocess.run(["git", "blame", "--porcelain", "--", FILE], cwd=cwd, check=True,
                           capture_output=True)

        def ours(rewrites: bool = True) -> None:
            rows = blame(cwd, FILE, graph, rewrites=rewrites)
            wanted = {i for r in rows if r.why for i in (r.why.patch, r.why.goal) if i}
            table = abbreviate_some(graph.node_ids(), wanted)
            render(rows, FILE.encode(), lambda i: table.get(i, i))

        def unfollowed() -> None:
            ours(rewrites=False)

        def fold() -> None:
            AgentState.open(repo, "bench", end_state=True)

        def command() -> None:
            subprocess.run([str(Path(sys.executable).with_name("git-gasp")), "blame", FILE],
                           cwd=cwd, check=True, capture_output=True)

        ran: list[str] = []
        real = git.run
        git.run = lambda where, *argv, **kw: ran.append(argv[0]) or real(where, *argv, **kw)
        try:
            rows = blame(cwd, FILE, graph)
        finally:
            git.run = real
        print(f"blame() runs git {' '.join(ran)}")
        explained = sum(1 for r in rows if r.why)
        print(f"{len(rows)} lines blamed, {explained} tied to a patch "
              f"({sum(1 for r in rows if r.why and not r.pinned)} through a run's change)")
        a, b, b0, c, d = [], [], [], [], []
        for _ in range(args.repeat):  # round robin: background load hits all of them
            a.append(_median(git_blame, 1))
            b.append(_median(ours, 1))
            b0.append(_median(unfollowed, 1))
            c.append(_median(fold, 1))
            d.append(_median(command, 1))
        ma, mb, mb0, mc, md = (statistics.median(x) * 1000 for x in (a, b, b0, c, d))
        print(f"(a) git blame --porcelain        {ma:8.1f} ms")
        print(f"(b) blame() joined and rendered  {mb:8.1f} ms   (b)/(a) = {mb / ma:.2f}x "
              "(target <= 1.5x)")
        print(f"(b0) (b), rewrites not followed  {mb0:8.1f} ms   (b)/(b0) = {mb / mb0:.2f}x "
              "(target ~1.0x: nothing was rewritten)")
        print(f"(c) cached fold (end state)      {mc:8.1f} ms")
        print(f"(d) git gasp blame (command)     {md:8.1f} ms   ((d)-(c))/(a) = "
              f"{(md - mc) / ma:.2f}x")


if __name__ == "__main__":
    main()
