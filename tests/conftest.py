"""Shared test fixtures: a hermetic git environment and helpers to drive real git.

Every test runs with an isolated HOME, GIT_CONFIG_NOSYSTEM=1 and fixed dates, so
nothing from the developer's machine leaks in.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
FIXTURE = REPO_ROOT / "fixture"


def _git_gasp_exe() -> list[str]:
    """The installed `git-gasp` next to this interpreter, else on PATH."""
    candidate = Path(sys.executable).with_name("git-gasp")
    if candidate.exists():
        return [str(candidate)]
    found = shutil.which("git-gasp")
    if found:
        return [found]
    pytest.fail("git-gasp is not installed; run `pip install -e .[test]` first")
    raise AssertionError  # unreachable


@pytest.fixture(autouse=True)
def hermetic(tmp_path_factory, monkeypatch):
    """Isolate HOME and git config; pin author/committer identity and dates."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GASP_NO_MERGE_DRIVER"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test Author")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "author@example.com")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test Committer")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "committer@example.com")
    monkeypatch.setenv("GIT_AUTHOR_DATE", "1767225600 +0000")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "1767225600 +0000")
    # Make the venv's git-gasp reachable as `git gasp`.
    exe_dir = str(Path(_git_gasp_exe()[0]).parent)
    monkeypatch.setenv("PATH", exe_dir + os.pathsep + os.environ.get("PATH", ""))
    (home / ".gitconfig").write_text("[init]\n\tdefaultBranch = main\n")
    yield home


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


def out(proc: subprocess.CompletedProcess) -> str:
    """stdout + stderr of a finished process, as text."""
    return proc.stdout.decode(errors="replace") + proc.stderr.decode(errors="replace")


def commit_all(repo: Path, message: str) -> str:
    """Stage everything and commit past any hook (tests build bad histories on purpose)."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def fixture_repo(tmp_path) -> Path:
    """A fresh git repo holding a copy of the shipped fixture, committed."""
    repo = tmp_path / "agent"
    shutil.copytree(FIXTURE, repo)
    git(repo, "init", "-q")
    commit_all(repo, "fixture")
    return repo
