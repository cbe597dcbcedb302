"""`git gasp hook NAME` runs before click is imported (`cli.main.hook_main`): the fast
path and the click command give the same output and exit code in every case."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.testing.events import goal_pair
from tests.testing.imports import imported
from tests.testing.run import git

pytestmark = pytest.mark.slow  # runs the CLI twice per case

LOG = "state/events.jsonl"
FAST = [sys.executable, "-P", "-m", "git_gasp.cli.main"]  # as the installed hook runs it
CLICK = [sys.executable, "-P", "-c",
         "import sys; from git_gasp.cli.main import click_main; click_main(sys.argv[1:])"]


def both(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run `args` through the fast path and through click; they must agree."""
    run_env = None if env is None else {**os.environ, **env}
    fast = subprocess.run([*FAST, *args], cwd=cwd, capture_output=True, env=run_env)
    slow = subprocess.run([*CLICK, *args], cwd=cwd, capture_output=True, env=run_env)
    assert (fast.returncode, fast.stdout, fast.stderr) == \
        (slow.returncode, slow.stdout, slow.stderr)
    return fast


def append(repo: Path, data: bytes) -> None:
    with open(repo / LOG, "ab") as f:
        f.write(data)


def test_accept(agent):
    append(agent, goal_pair(1))
    git(agent, "add", LOG)
    proc = both(agent, "hook", "pre-commit")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


def test_refuse(agent):
    append(agent, goal_pair(1))
    git(agent, "add", LOG)
    git(agent, "commit", "-q", "--no-verify", "-m", "one")
    log = agent / LOG
    log.write_bytes(log.read_bytes().replace(b"goal 1", b"goal X"))
    git(agent, "add", LOG)
    proc = both(agent, "hook", "pre-commit")
    assert proc.returncode == 1
    assert b"modified in place" in proc.stderr and proc.stdout == b""


def test_not_a_repository(tmp_path):
    proc = both(tmp_path, "hook", "pre-commit")
    assert proc.returncode != 0
    assert proc.stderr.startswith(b"git gasp: error: ") and proc.stderr.count(b"\n") == 1


def test_first_commit(tmp_path):
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "state").mkdir()
    (repo / LOG).write_bytes(goal_pair(1))
    git(repo, "add", LOG)
    assert both(repo, "hook", "pre-commit").returncode == 0
    (repo / LOG).write_bytes(b"not an event\n")
    git(repo, "add", LOG)
    proc = both(repo, "hook", "pre-commit")
    assert proc.returncode == 1 and b"check 1, envelope" in proc.stderr


def test_merge_in_progress(agent):
    append(agent, goal_pair(1))
    git(agent, "add", LOG)
    git(agent, "commit", "-q", "--no-verify", "-m", "one")
    base = (agent / LOG).read_bytes()
    git(agent, "checkout", "-q", "-b", "theirs")
    append(agent, goal_pair(2))
    git(agent, "commit", "-q", "--no-verify", "-am", "two")
    git(agent, "checkout", "-q", "main")
    append(agent, goal_pair(3))
    git(agent, "commit", "-q", "--no-verify", "-am", "three")
    git(agent, "config", "--remove-section", "merge.gasp")
    git(agent, "merge", "--no-commit", "theirs", check=False)
    (agent / LOG).write_bytes(base + goal_pair(3))  # theirs' lines lost
    git(agent, "add", LOG)
    for name in ("pre-commit", "pre-merge-commit"):
        proc = both(agent, "hook", name)
        assert proc.returncode == 1 and b"merge rule" in proc.stderr
    (agent / LOG).write_bytes(base + goal_pair(3) + goal_pair(2))
    git(agent, "add", LOG)
    assert both(agent, "hook", "pre-commit").returncode == 0


def test_usage_errors_still_go_through_click(agent):
    for args in (("hook",), ("hook", "post-commit"), ("hook", "pre-commit", "extra"),
                 ("hook", "-h")):
        fast = subprocess.run([*FAST, *args], cwd=agent, capture_output=True)
        slow = subprocess.run([*CLICK, *args], cwd=agent, capture_output=True)
        assert (fast.returncode, fast.stdout, fast.stderr) == \
            (slow.returncode, slow.stdout, slow.stderr)


def test_the_fast_path_loads_neither_click_nor_yaml_nor_dulwich_packs(agent):
    """The pre-commit hook reads the staged log's loose object through dulwich's objects
    (the one object reader), never its pack reader, click or PyYAML."""
    append(agent, goal_pair(1))
    git(agent, "add", LOG)
    proc = subprocess.run([*FAST, "hook", "pre-commit"], cwd=agent, capture_output=True,
                          env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"})
    assert proc.returncode == 0, proc.stderr
    modules = imported(proc.stderr)
    assert "git_gasp.guard.commit_guard" in modules
    heavy = [m for m in modules if m.split(".")[0] in ("click", "yaml")
             or m in ("dulwich.pack", "dulwich.repo", "dulwich.object_store")]
    assert not heavy, heavy


def test_pre_receive_runs_without_click_and_says_what_click_says(agent, tmp_path):
    """The server's hook, run on every push (a sync's lost race too), skips click too:
    the same lines and exit codes for an accepted and a refused update, with --check
    and without."""
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(agent, "push", "-q", str(bare), "main")
    old = git(agent, "rev-parse", "HEAD").strip()
    append(agent, goal_pair(1))
    git(agent, "commit", "-q", "--no-verify", "-am", "one")
    good = git(agent, "rev-parse", "HEAD").strip()
    log = agent / LOG
    log.write_bytes(log.read_bytes().replace(b"goal 1", b"goal X"))
    git(agent, "commit", "-q", "--no-verify", "-am", "rewrite")
    bad = git(agent, "rev-parse", "HEAD").strip()
    git(agent, "push", "-q", str(bare), f"{bad}:refs/tags/bad")  # the objects, on the server
    for update, code in ((f"{old} {good} refs/heads/main\n", 0),
                         (f"{old} {bad} refs/heads/main\n", 1)):
        for extra in ((), ("--check",)):
            args = ("hook", "pre-receive", *extra)
            fast = subprocess.run([*FAST, *args], cwd=bare, input=update.encode(),
                                  capture_output=True,
                                  env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"})
            slow = subprocess.run([*CLICK, *args], cwd=bare, input=update.encode(),
                                  capture_output=True)
            lines = [x for x in fast.stderr.splitlines() if not x.startswith(b"import time:")]
            assert (fast.returncode, fast.stdout, lines) == \
                (slow.returncode, slow.stdout, slow.stderr.splitlines())
            assert fast.returncode == code, slow.stderr
            assert (b"git gasp: refused refs/heads/main" in slow.stderr) == bool(code)
            modules = imported(fast.stderr)
            assert "git_gasp.guard.receive" in modules
            assert not [m for m in modules if m.split(".")[0] == "click"]
