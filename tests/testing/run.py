"""Run real git and the installed `git gasp` as a user would."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def git_gasp_exe() -> list[str]:
    """The installed `git-gasp` next to this interpreter, else on PATH."""
    candidate = Path(sys.executable).with_name("git-gasp")
    if candidate.exists():
        return [str(candidate)]
    found = shutil.which("git-gasp")
    if found:
        return [found]
    pytest.fail("git-gasp is not installed; run `pip install -e .[test]` first")
    raise AssertionError  # unreachable


def git(cwd: Path, *args: str, check: bool = True, input: bytes | None = None) -> str:
    """Run real git in `cwd`; return stdout as text."""
    proc = subprocess.run(
        ["git", *args], cwd=cwd, input=input, capture_output=True, check=False
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"git {' '.join(args)} failed ({proc.returncode}):\n"
            f"{proc.stdout.decode(errors='replace')}{proc.stderr.decode(errors='replace')}"
        )
    return proc.stdout.decode()


def gasp(cwd: Path, *args: str, input: bytes | None = None) -> subprocess.CompletedProcess:
    """Run the installed `git gasp` as a user would; never raises on exit code."""
    return subprocess.run(
        ["git", "gasp", *args], cwd=cwd, input=input, capture_output=True, text=False
    )


def ok(cwd: Path, *args: str) -> str:
    """Run `git gasp ARGS` in `cwd`, which must succeed; its stdout, stripped."""
    proc = gasp(cwd, *args)
    assert proc.returncode == 0, out(proc)
    return proc.stdout.decode().strip()


def out(proc: subprocess.CompletedProcess) -> str:
    """stdout + stderr of a finished process, as text."""
    return proc.stdout.decode(errors="replace") + proc.stderr.decode(errors="replace")


def commit_all(repo: Path, message: str) -> str:
    """Stage everything and commit past any hook (tests build bad histories on purpose)."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def drained(where: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """Wait until what the agent hooks queued in the git dir of `where` is recorded: run
    the drainer as the hook does at SessionEnd (it waits for a drainer at work first)."""
    return subprocess.run([sys.executable, "-P", "-m", "git_gasp.adapters.agent_hook.drain",
                           "--report", "0", "--", str(where)],
                          capture_output=True, env=env, check=True)
