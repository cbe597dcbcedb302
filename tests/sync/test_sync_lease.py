"""A sync holds the agent's lease from before it looks at the work tree to the end, so
no writer appends to the log under its merge: a `git gasp record` started meanwhile is
refused, or with `--wait` waits and lands after it — even when this worker keeps the
lease between commands for an open run (pid 0), which the sync takes under its own pid
and keeps for the run again afterwards. A sync facing a writer's lease refuses at once,
or with `--wait` waits for it. The sync is held in the middle by the remote's
pre-receive hook, which waits for the test's word."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from git_gasp.store.lease import parse_lease
from tests.store.test_lease_wait import Holder
from tests.testing.run import gasp, git, out

pytestmark = pytest.mark.slow  # real clones, pushes and held processes

LOG = "state/events.jsonl"
LIMIT_S = 120  # how long anything here may hang before the test fails (never asserted)
PAUSE = """#!/bin/sh
touch "{marks}/in-hook"
n=0
while [ ! -e "{marks}/go" ] && [ $n -lt {ticks} ]; do sleep 0.1; n=$((n + 1)); done
[ -e "{marks}/refuse" ] && {{ echo "refused by the test"; exit 1; }}
exit 0
"""


def _until(what, message: str) -> None:
    deadline = time.monotonic() + LIMIT_S
    while not what():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out: {message}")
        time.sleep(0.05)


@pytest.fixture
def paused(agent, tmp_path) -> Path:
    """`agent` with a bare remote `origin` whose pre-receive waits for `marks/go`; the
    agent is one commit ahead, so its next sync pushes and pauses there."""
    marks = tmp_path / "marks"
    marks.mkdir()
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(agent, "remote", "add", "origin", str(bare))
    git(agent, "push", "-q", "-u", "origin", "main")
    hook = bare / "hooks" / "pre-receive"
    hook.write_text(PAUSE.format(marks=marks, ticks=LIMIT_S * 10))
    hook.chmod(0o755)
    return marks


def _commit(agent: Path, message: str) -> None:
    git(agent, "add", "-A")
    git(agent, "commit", "-q", "--no-verify", "-m", message)


def _start_sync(agent: Path, marks: Path, *args: str) -> subprocess.Popen:
    proc = subprocess.Popen(["git", "gasp", "sync", "--json", *args], cwd=agent,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _until(lambda: (marks / "in-hook").exists() or proc.poll() is not None,
           "the sync reaching the remote's hook")
    assert proc.poll() is None, proc.communicate()
    return proc


def _parent(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_bytes()
    return int(stat[stat.rfind(b")") + 2:].split()[1])


def _lease(agent: Path):
    return parse_lease((agent / ".agent" / "lease").read_bytes())


def test_a_record_during_a_sync_is_refused_or_waits_even_with_a_runs_kept_lease(agent,
                                                                                 paused):
    run = gasp(agent, "run", "start", "--task", "sync under a run")
    assert run.returncode == 0, out(run)
    assert _lease(agent).pid == 0  # kept between this worker's commands
    _commit(agent, "run started")
    sync = _start_sync(agent, paused)
    try:
        syncing = _lease(agent).pid  # the sync took the run's lease under its own pid
        assert syncing != 0 and _parent(syncing) == sync.pid  # git runs git-gasp
        before = (agent / LOG).read_bytes()
        refused = gasp(agent, "record", "observation", "--summary", "during the merge")
        assert refused.returncode == 1, out(refused)
        assert "lease held by" in out(refused) and f"pid {syncing}" in out(refused)
        waiting = subprocess.Popen(
            ["git", "gasp", "record", "observation", "--summary", "after it", "--wait"],
            cwd=agent, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert (agent / LOG).read_bytes() == before  # nothing appended under the sync
        (paused / "go").touch()
        stdout, stderr = sync.communicate(timeout=LIMIT_S)
        assert sync.returncode == 0, stderr
        assert json.loads(stdout)["status"] == "pushed"
        got, err = waiting.communicate(timeout=LIMIT_S)
        assert waiting.returncode == 0, err
    finally:
        for proc in (sync,):
            if proc.poll() is None:
                proc.kill()
    node = got.decode().strip()
    assert node.startswith("observation_") and node.encode() in (agent / LOG).read_bytes()
    assert _lease(agent).pid == 0  # kept for the run again
    assert gasp(agent, "run", "finish", "--outcome", "done").returncode == 0


def test_a_sync_or_record_refuses_a_writers_lease_at_once_or_waits_for_it(agent, paused):
    (paused / "go").touch()  # the remote's hook lets everything through
    holder = Holder(agent, worker="a-writer")
    try:
        code = gasp(agent, "sync")
        assert code.returncode == 5 and "lease held by a-writer" in out(code), out(code)
        short = gasp(agent, "sync", "--wait=0.2")
        assert short.returncode == 5, out(short)
        assert "lease still held by a-writer" in out(short)
        assert "after waiting 0.2 s" in out(short)
        assert len(out(short).strip().splitlines()) == 1
        record = gasp(agent, "record", "goal", "--title", "g", "--wait=0.2")
        assert record.returncode == 1 and len(out(record).strip().splitlines()) == 1
        assert out(record).startswith("git gasp: error: lease still held by a-writer")
        waiting = subprocess.Popen(["git", "gasp", "sync", "--wait"], cwd=agent,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        holder.release()
        _, err = waiting.communicate(timeout=LIMIT_S)
        assert waiting.returncode == 0, err
    finally:
        holder.close()
    assert not (agent / ".agent" / "lease").exists()  # given back


@pytest.mark.parametrize("diverged", [False, True], ids=["ahead", "merged"])
def test_a_commit_made_during_a_sync_is_never_undone(agent, paused, tmp_path, diverged):
    """The remote refuses the push after someone committed on the branch: putting the
    branch back (`git reset --keep`) would drop that commit and its files; the sync
    leaves the branch where the commit put it, says so, and the next sync pushes it."""
    if diverged:  # the remote moved: the sync merges, and the commit lands on the merge
        other = tmp_path / "other"
        git(tmp_path, "clone", "-q", str(tmp_path / "remote.git"), str(other))
        (paused / "go").touch()
        assert gasp(other, "record", "goal", "--title", "theirs").returncode == 0
        _commit(other, "theirs")
        git(other, "push", "-q")
        (paused / "go").unlink()
        (paused / "in-hook").unlink()
    assert gasp(agent, "record", "goal", "--title", "mine").returncode == 0
    _commit(agent, "mine")
    (paused / "refuse").touch()
    sync = _start_sync(agent, paused)
    try:
        (agent / "notes.txt").write_text("committed while the sync ran\n")
        git(agent, "add", "notes.txt")
        git(agent, "commit", "-q", "--no-verify", "-m", "during the sync")
        mine = git(agent, "rev-parse", "HEAD").strip()
        (paused / "go").touch()
        stdout, stderr = sync.communicate(timeout=LIMIT_S)
    finally:
        if sync.poll() is None:
            sync.kill()
    report = json.loads(stdout)
    assert sync.returncode == 1 and report["status"] == "moved", stderr
    assert "no commit is lost" in stderr.decode() and len(stderr.strip().splitlines()) == 1
    assert git(agent, "rev-parse", "HEAD").strip() == mine == report["head"]
    assert (agent / "notes.txt").exists() and git(agent, "status", "--porcelain") == ""
    (paused / "refuse").unlink()
    again = gasp(agent, "sync")
    assert again.returncode == 0, out(again)
    assert git(agent, "show", "origin/main:notes.txt") == "committed while the sync ran\n"
