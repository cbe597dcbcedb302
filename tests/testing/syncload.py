"""Many clones syncing to one remote at once (tests/sync/test_sync_concurrency.py and
bench/bench_sync.py): each clone appends a goal pair and commits, then runs the
installed `git gasp sync --json`, for a number of rounds, all clones in parallel."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.testing.events import goal_pair

LOG = "state/events.jsonl"
# the remote's post-receive: every accepted update of main, "old new", one per line
POST_RECEIVE = """#!/bin/sh
while read old new ref; do
  [ "$ref" = refs/heads/main ] && echo "$old $new" >> "$GIT_DIR/accepted.log"
done
exit 0
"""


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True)
    if proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} in {cwd}: {proc.stderr.decode()}")
    return proc.stdout.decode()


def make_remote(where: Path, seed: Path, *, server_hook: bool = True) -> Path:
    """A bare `main` remote holding `seed`'s history, with our pre-receive judging every
    push by check 4 and, on the lines it appends, checks 1, 5 and 7 (`--check`), and a
    post-receive logging each accepted update."""
    remote = where / "remote.git"
    git(where, "init", "-q", "--bare", "-b", "main", str(remote))
    git(remote, "config", "receive.denyNonFastForwards", "true")
    git(remote, "config", "receive.denyDeletes", "true")
    if server_hook:
        proc = subprocess.run(["git", "gasp", "install-hooks", "--server", "--check"],
                              cwd=remote, capture_output=True)
        assert proc.returncode == 0, proc.stderr
    hook = remote / "hooks" / "post-receive"
    hook.write_text(POST_RECEIVE)
    hook.chmod(0o755)
    git(seed, "push", "-q", str(remote), "HEAD:refs/heads/main")
    return remote


def make_clones(where: Path, url: str, n: int) -> list[Path]:
    """`n` plain clones of `url` (no hooks installed: sync brings the driver itself)."""
    clones = []
    for i in range(n):
        clone = where / f"clone{i}"
        git(where, "clone", "-q", url, str(clone))
        clones.append(clone)
    return clones


def event_ids(number: int) -> list[str]:
    return [f"event_g{number}", f"event_g{number}o"]


@dataclass
class Run:
    """What the clones' syncs did."""

    results: list[dict] = field(default_factory=list)  # one --json report per sync
    codes: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    appended: list[str] = field(default_factory=list)  # every event id committed
    seconds: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def pushes(self) -> int:
        return sum(1 for r in self.results if r.get("status") == "pushed")

    @property
    def retries(self) -> int:
        return sum(r.get("retries", 0) for r in self.results)

    def figures(self) -> str:
        pushes = max(1, self.pushes)
        return (f"{len(self.results)} syncs, {self.pushes} pushes in {self.seconds:.1f} s: "
                f"{self.pushes / self.seconds:.2f} pushes/s, "
                f"{self.retries / pushes:.2f} retries/push, exit codes "
                f"{ {c: self.codes.count(c) for c in sorted(set(self.codes))} }")


def sync(clone: Path, *args: str, env: dict | None = None) -> tuple[int, dict | None, str]:
    proc = subprocess.run(["git", "gasp", "sync", "--json", *args], cwd=clone,
                          capture_output=True, env=env)
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        report = None
    return proc.returncode, report, proc.stderr.decode(errors="replace")


def _clone_loop(run: Run, clone: Path, index: int, rounds: int, args: tuple[str, ...]) -> None:
    for r in range(rounds):
        number = 1000 * (index + 1) + r
        with open(clone / LOG, "ab") as fh:
            fh.write(goal_pair(number))
        git(clone, "add", LOG)
        git(clone, "commit", "-q", "--no-verify", "-m", f"clone {index} round {r}")
        code, report, err = sync(clone, *args)
        with run.lock:
            run.appended += event_ids(number)
            run.codes.append(code)
            if report is not None:
                run.results.append(report)
            if code not in (0, 4):
                run.errors.append(f"clone {index} round {r}: exit {code}: {err.strip()}")


def run_clones(clones: list[Path], rounds: int, *args: str) -> Run:
    """Every clone appends and syncs `rounds` times, all at once; then each clone syncs
    until its work is on the remote (a sync that gave up left it on the branch)."""
    run = Run()
    start = time.monotonic()
    threads = [threading.Thread(target=_clone_loop, args=(run, c, i, rounds, args))
               for i, c in enumerate(clones)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    run.seconds = time.monotonic() - start
    for clone in clones:  # the stragglers, one at a time
        for _ in range(10):
            code, report, err = sync(clone, *args)
            if report is not None:
                run.results.append(report)
            run.codes.append(code)
            if code == 0:
                break
        else:
            run.errors.append(f"{clone.name} never synced: {err.strip()}")
    return run


def remote_ids(remote: Path) -> list[str]:
    data = subprocess.run(["git", "show", f"main:{LOG}"], cwd=remote, capture_output=True,
                          check=True).stdout
    return [json.loads(line)["id"] for line in data.splitlines()]


def accepted(remote: Path) -> list[tuple[str, str]]:
    path = remote / "accepted.log"
    lines = path.read_text().split("\n") if path.exists() else []
    return [tuple(x.split()) for x in lines if x.strip()]


def only_extended(remote: Path) -> list[str]:
    """The accepted updates of main that did not extend it (should be none)."""
    bad = []
    for old, new in accepted(remote):
        if set(old) != {"0"} and subprocess.run(
                ["git", "merge-base", "--is-ancestor", old, new], cwd=remote).returncode != 0:
            bad.append(f"{old[:12]} -> {new[:12]}")
    return bad

