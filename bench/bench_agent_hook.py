"""Benchmark: the agent hook, `git-gasp-hook claude-code`, which Claude Code runs twice on
every tool call (PreToolUse, PostToolUse), against `python -c pass`; and the drainer that
records what the hooks queue.

Builds an agent repository (``git gasp init``) holding a live Claude Code session that
has made ``--calls`` tool calls already (recorded through the same code, in-process,
from payloads shaped like ``/work/shared/samples/claude-code-*/hook-payloads.jsonl``:
the session's start, its prompt, then Bash, Write and Edit calls with their outputs).
Then times, as subprocesses, interleaved so background load hits all alike and with
bytecode cached under a private prefix (as after a pip install): (a) the baseline
``python -c pass`` with the console script's interpreter, (b) ``git-gasp-hook`` queueing
a PreToolUse and (c) the PostToolUse of the same call, a new call each round; and (d)
importing what the hook imports (``python -c 'import …'``). The hook starts a detached
drainer and returns; each round waits, untimed, for that drainer to finish before the
next command, so it does not load the next one. Prints the medians of wall-clock time
and of CPU time (user + system of the child: the drainer is not the hook's child, its
time is not counted) and the ratios to (a).

Then a burst: ``--burst`` tool calls (PreToolUse + PostToolUse each) queued at once, and
the time one drainer (``python -m git_gasp.adapters.agent_hook.drain``) takes to record
them all, against recording as the hook did before it only queued: one process per payload that
queues and drains (``live.run_hook``), for the next ``--burst`` calls.

The hook and its interpreter are what a user runs (``bench/installed.py``: pip installs
a wheel built from this checkout into a fresh virtualenv, so ``git-gasp-hook`` is the
file pip wrote, no editable-install finder); ``--dev-venv`` times this venv's own
``git-gasp-hook`` instead. With ``--callgrind``, (a) and (c) also run once under
``valgrind --tool=callgrind``: their instruction counts repeat to within a fraction of a
percent whatever the load. Never asserts.

    .venv/bin/python bench/bench_agent_hook.py [--quick] [--repeat N] [--calls N]
        [--burst N] [--callgrind] [--dev-venv]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from installed import installed_bin  # noqa: E402

from git_gasp.adapters.agent_hook.queue_files import enqueue, lock_held, queued  # noqa: E402
from git_gasp.adapters.live import run_hook  # noqa: E402

SAMPLES = ROOT / "tests" / "adapters" / "data" / "claude-code-2.1.328" / "hook-payloads.jsonl"
IMPORTS = "import git_gasp.adapters.agent_hook.entry"
OLD_HOOK = ("import sys; from git_gasp.adapters.live import run_hook; "
            "run_hook(sys.stdin.buffer.read(), agent='claude-code')")
SESSION = "6f48f32c-63b8-44c3-9f60-bench0000000"


def find_script(name: str = "git-gasp") -> str:
    """The console script `name` next to this interpreter (the venv's), else on PATH."""
    here = Path(sys.executable).with_name(name)
    found = str(here) if here.exists() else shutil.which(name)
    if found is None:
        sys.exit(f"{name} console script not found; `pip install -e .` into this venv")
    return found


def wait_drained(repo: Path, timeout: float = 120.0) -> None:
    """Until the queue is empty and no drainer holds its lock (untimed)."""
    gdir = str(repo / ".git" / "gasp")
    deadline = time.monotonic() + timeout
    while (queued(gdir) or lock_held(gdir)) and time.monotonic() < deadline:
        time.sleep(0.005)


class Payloads:
    """Hook payloads shaped like the real ones, for one session in `repo`."""

    def __init__(self, repo: Path) -> None:
        lines = [json.loads(x) for x in SAMPLES.read_text().splitlines() if x.strip()]
        self.by_event = {}
        for p in lines:  # the first of each event, with the richest tool calls kept
            self.by_event.setdefault(p["hook_event_name"], p)
        self.tools = [p for p in lines if p["hook_event_name"] == "PostToolUse"]
        self.repo = repo

    def _fix(self, p: dict) -> dict:
        return dict(p, cwd=str(self.repo), session_id=SESSION,
                    transcript_path=str(self.repo / ".no-transcript.jsonl"))

    def event(self, name: str) -> bytes:
        return json.dumps(self._fix(self.by_event[name])).encode()

    def call(self, i: int) -> tuple[bytes, bytes]:
        """The PreToolUse and PostToolUse payloads of tool call `i`."""
        post = self._fix(self.tools[i % len(self.tools)])
        post["tool_use_id"] = f"toolu_bench{i:08d}"
        if post["tool_name"] == "Bash":
            post["tool_input"] = dict(post["tool_input"], command=f"pytest -q tests/t{i}.py")
        pre = {k: v for k, v in post.items() if k not in ("tool_response", "duration_ms")}
        pre["hook_event_name"] = "PreToolUse"
        return json.dumps(pre).encode(), json.dumps(post).encode()


def build(base: Path, calls: int, env: dict[str, str], script: str) -> tuple[Path, Payloads]:
    repo = base / "agent"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, env=env)
    for key, value in (("user.name", "bench"), ("user.email", "bench@example.com")):
        subprocess.run(["git", "config", key, value], cwd=repo, check=True, env=env)
    subprocess.run([script, "init", "."], cwd=repo, check=True, env=env,
                   stdout=subprocess.DEVNULL)
    pay = Payloads(repo)
    run_hook(pay.event("SessionStart"), agent="claude-code")
    run_hook(pay.event("UserPromptSubmit"), agent="claude-code")
    for i in range(calls):
        for data in pay.call(i):
            run_hook(data, agent="claude-code")
    return repo, pay


CPU: dict[str, list[float]] = {}


def _cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def _time(argv: list[str], env: dict[str, str], cwd: Path, data: bytes | None = None,
          key: str | None = None) -> float:
    """Wall-clock seconds of one run (its CPU seconds go to CPU[key]); then, untimed,
    until the drainer it may have started is done."""
    c0, t0 = _cpu(), time.perf_counter()
    subprocess.run(argv, input=data, cwd=cwd, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    if key is not None:
        CPU.setdefault(key, []).append(_cpu() - c0)
    wait_drained(cwd)
    return wall


def burst(repo: Path, pay: Payloads, first: int, n: int, python: str,
          env: dict[str, str]) -> tuple[float, float]:
    """(seconds one drainer takes to record `n` queued tool calls, seconds `n` calls take
    recorded one process per payload as the hook did before it only queued)."""
    gdir = str(repo / ".git" / "gasp")
    for i in range(first, first + n):
        for data in pay.call(i):
            enqueue(gdir, "claude-code", data)
    t0 = time.perf_counter()
    subprocess.run([python, "-P", "-m", "git_gasp.adapters.agent_hook.drain", "--", str(repo)],
                   cwd=repo, env=env, check=True)
    drainer = time.perf_counter() - t0
    if queued(gdir):
        sys.exit("the drainer left entries queued")
    t0 = time.perf_counter()
    for i in range(first + n, first + 2 * n):
        for data in pay.call(i):
            subprocess.run([python, "-P", "-c", OLD_HOOK], input=data, cwd=repo, env=env,
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return drainer, time.perf_counter() - t0


def instructions(argv: list[str], env: dict[str, str], cwd: Path,
                 data: bytes | None = None) -> int:
    """Instructions one run executes (callgrind's total; the bytecode is cached)."""
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                           *argv], input=data, cwd=cwd, env=env, capture_output=True,
                          check=True)
    found = re.search(rb"Collected : (\d+)", proc.stderr)
    if found is None:
        sys.exit("valgrind printed no instruction count")
    return int(found.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10 rounds instead of 30")
    ap.add_argument("--repeat", type=int, default=None, help="rounds (one call each)")
    ap.add_argument("--calls", type=int, default=200, help="tool calls recorded before timing")
    ap.add_argument("--burst", type=int, default=50,
                    help="tool calls queued at once for the drainer (and as many the old way)")
    ap.add_argument("--callgrind", action="store_true",
                    help="also count the instructions of (a) and (c) under valgrind")
    ap.add_argument("--dev-venv", action="store_true",
                    help="time this venv's git-gasp (a development install) instead")
    args = ap.parse_args()
    repeat = args.repeat or (10 if args.quick else 30)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        bin_dir = Path(find_script()).parent if args.dev_venv else installed_bin(base, ROOT)
        script = str(bin_dir / "git-gasp")
        hook_script = str(bin_dir / "git-gasp-hook")
        python = sys.executable if args.dev_venv else str(bin_dir / "python")
        print(f"bench_agent_hook: median of {repeat} interleaved rounds")
        print(f"python {platform.python_version()} ({python}) on {platform.machine()}, "
              f"{os.cpu_count()} CPUs; console script {hook_script}")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(PYTHONPYCACHEPREFIX=str(base / "pycache"), HOME=str(base),
                   GIT_CONFIG_NOSYSTEM="1")
        os.environ.update(HOME=str(base), GIT_CONFIG_NOSYSTEM="1")
        t0 = time.perf_counter()
        repo, pay = build(base, args.calls, env, script)
        events = (repo / "state" / "events.jsonl").read_bytes().count(b"\n")
        print(f"repo: a session of {args.calls} tool calls recorded, {events} events in the "
              f"log (built in {time.perf_counter() - t0:.1f} s)")
        hook = [hook_script, "claude-code"]
        runs = {"pass": [python, "-c", "pass"], "imports": [python, "-P", "-c", IMPORTS]}
        for argv in runs.values():  # warm the page cache and compile the bytecode
            _time(argv, env, repo)
        pre, post = pay.call(args.calls)
        _time(hook, env, repo, pre)
        _time(hook, env, repo, post)
        times: dict[str, list[float]] = {k: [] for k in ("pass", "pre", "post", "imports")}
        for i in range(repeat):
            pre, post = pay.call(args.calls + 1 + i)
            times["pass"].append(_time(runs["pass"], env, repo, key="pass"))
            times["pre"].append(_time(hook, env, repo, pre, key="pre"))
            times["post"].append(_time(hook, env, repo, post, key="post"))
            times["imports"].append(_time(runs["imports"], env, repo, key="imports"))
        log = (repo / ".git" / "gasp" / "adapter.log").read_text().splitlines()
        recorded = sum("PostToolUse: recorded" in line for line in log[-2 * repeat:])
        drainer_s, old_s = burst(repo, pay, args.calls + 2 + repeat, args.burst, python, env)
        counted = None
        if args.callgrind:  # interpreters' files and the hook's bytecode are warm by now
            pre, post = pay.call(args.calls + 1 + repeat)
            _time(hook, env, repo, pre)
            counted = (instructions(runs["pass"], env, repo),
                       instructions([python, "-P", *hook], env, repo, post))
    med = {k: statistics.median(v) for k, v in times.items()}
    best = {k: min(v) for k, v in times.items()}
    cpu = {k: statistics.median(v) for k, v in CPU.items()}
    print(f"(PostToolUse recorded by the drainers of {recorded} of the last {repeat} timed "
          "rounds)")
    print()
    print(f"{'command':<46}{'median ms':>11}{'min ms':>9}{'vs (a)':>9}"
          f"{'CPU ms':>9}{'vs (a)':>9}")
    for label, key in (("(a) python -c pass [baseline]", "pass"),
                       ("(b) git-gasp-hook < PreToolUse", "pre"),
                       ("(c) git-gasp-hook < PostToolUse", "post"),
                       ("(d) python -c 'import <the hook path>'", "imports")):
        print(f"{label:<46}{med[key] * 1000:>11.1f}{best[key] * 1000:>9.1f}"
              f"{med[key] / med['pass']:>8.2f}x{cpu[key] * 1000:>9.1f}"
              f"{cpu[key] / cpu['pass']:>8.2f}x")
    print()
    print(f"PostToolUse hook / python -c pass = {med['post'] / med['pass']:.2f}x "
          "(target <= 1.5x); "
          f"its imports {(med['imports'] - med['pass']) * 1000:+.1f} ms, recording "
          f"{(med['post'] - med['imports']) * 1000:+.1f} ms")
    print(f"in CPU time: {cpu['post'] / cpu['pass']:.2f}x; its imports "
          f"{(cpu['imports'] - cpu['pass']) * 1000:+.1f} ms, recording "
          f"{(cpu['post'] - cpu['imports']) * 1000:+.1f} ms")
    events = 2 * args.burst
    print(f"burst of {events} payloads: one drainer {drainer_s:.2f} s "
          f"({drainer_s / events * 1000:.1f} ms each); one process per payload, queueing "
          f"and draining (the hook before) {old_s:.2f} s ({old_s / events * 1000:.1f} ms "
          f"each) = {old_s / drainer_s:.1f}x the drainer's time")
    if counted is not None:
        base, post_ir = counted
        print(f"callgrind: python -c pass {base / 1e6:.1f} M instructions, PostToolUse hook "
              f"{post_ir / 1e6:.1f} M = {post_ir / base:.2f}x")


if __name__ == "__main__":
    main()
