"""A `git gasp sync` killed with SIGKILL at a random point (20 trials, merges and
rebases; the sync alone, whose git processes run on, or its whole process group)
never loses a committed event, and the next sync completes and leaves a clean tree: no
merge or rebase in progress, nothing uncommitted, no index lock, temporary file or
record of its own left."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.testing.events import goal_pair
from tests.testing.run import git, git_gasp_exe
from tests.testing.syncload import LOG, make_clones, make_remote, only_extended, remote_ids

pytestmark = pytest.mark.slow

TRIALS = 20


def _commit(repo: Path, number: int) -> list[str]:
    with open(repo / LOG, "ab") as fh:
        fh.write(goal_pair(number))
    git(repo, "add", LOG)
    git(repo, "commit", "-q", "--no-verify", "-m", f"goal {number}")
    return [f"event_g{number}", f"event_g{number}o"]


def _clean(repo: Path) -> list[str]:
    problems = []
    if git(repo, "status", "--porcelain", "--untracked-files=no"):
        problems.append("uncommitted changes")
    for name in ("MERGE_HEAD", "rebase-merge", "rebase-apply", "index.lock",
                 "gasp/sync.json"):
        if (repo / ".git" / name).exists():
            problems.append(name)
    problems += [p.name for p in repo.glob(".merge_file_*")]  # the driver's temporary files
    return problems


def _wait_for(proc: subprocess.Popen, repo: Path, how: int, rng: random.Random) -> None:
    """Until the moment to kill: a random delay (how 0), or, watching the git dir, just
    after the sync recorded its merge or rebase (1), once git's operation shows (2: a
    MERGE_HEAD, a rebase-merge/ or a moved branch), or a random delay after that (3)."""
    if how == 0:
        time.sleep(rng.uniform(0.0, 0.9))
        return
    gdir = repo / ".git"
    start = git(repo, "rev-parse", "HEAD").strip()
    deadline = time.monotonic() + 5
    while proc.poll() is None and time.monotonic() < deadline:
        if how == 1 and (gdir / "gasp" / "sync.json").exists():
            break
        if how >= 2 and ((gdir / "MERGE_HEAD").exists() or (gdir / "rebase-merge").exists()
                         or _head(gdir) not in (None, start)):
            break
        time.sleep(0.002)
    if how == 3:
        time.sleep(rng.uniform(0.0, 0.3))


def _head(gdir: Path) -> str | None:
    try:
        return (gdir / "refs" / "heads" / "main").read_text().strip()
    except OSError:
        return None


def test_a_killed_sync_loses_nothing_and_the_next_one_finishes(agent, tmp_path):
    rng = random.Random(14)
    remote = make_remote(tmp_path, agent, server_hook=False)
    victim, other = make_clones(tmp_path, str(remote), 2)
    committed: list[str] = []
    killed = 0
    cleaned: list[str] = []
    for trial in range(TRIALS):
        # the remote moves: a commit on top of its tip (a fast-forward for it)
        git(other, "fetch", "-q")
        git(other, "reset", "-q", "--hard", "origin/main")
        committed += _commit(other, 10_000 + trial)
        git(other, "push", "-q", "origin", "main")
        committed += _commit(victim, 20_000 + trial)
        mode = ("--rebase",) if trial % 2 else ()
        # the git-gasp process itself (`git gasp` would be a git process waiting for it)
        proc = subprocess.Popen([*git_gasp_exe(), "sync", "--max-wait", "0.1", *mode],
                                cwd=victim, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        _wait_for(proc, victim, trial % 4, rng)
        if proc.poll() is None:
            if trial % 3 == 2:  # the sync and the git processes it runs, all at once
                os.killpg(proc.pid, signal.SIGKILL)
            else:  # the sync alone: its git processes run on, and finish
                proc.send_signal(signal.SIGKILL)
            killed += 1
        proc.wait()
        again = subprocess.run(["git", "gasp", "sync", "--json", *mode], cwd=victim,
                               capture_output=True)
        report = json.loads(again.stdout)
        cleaned += report["cleaned"]
        assert again.returncode == 0, (trial, report)
        assert _clean(victim) == [], (trial, report)
        assert git(victim, "rev-parse", "HEAD") == git(remote, "rev-parse", "main")
        ids = remote_ids(remote)
        assert len(ids) == len(set(ids)), f"trial {trial}: an event twice"
        assert set(committed) <= set(ids), f"trial {trial}: an event lost"
    print(f"{killed} of {TRIALS} syncs killed before they finished; the next one "
          f"cleaned up: {cleaned}")
    assert killed >= TRIALS // 4  # the delays do reach into the syncs
    assert only_extended(remote) == []
