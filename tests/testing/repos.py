"""Repositories built once and copied: cheaper than running `git gasp init` per test."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.testing.paths import FIXTURE
from tests.testing.run import commit_all, gasp, git, out

AGENT_ID = "tester"


def init_agent(parent: Path, name: str = "agent") -> Path:
    """`git gasp init NAME --agent-id tester` in `parent`: layout committed, guard installed."""
    proc = gasp(parent, "init", name, "--agent-id", AGENT_ID)
    assert proc.returncode == 0, out(proc)
    return parent / name


def copy_repo(src: Path, dest: Path) -> Path:
    """A full copy of the repo at `src` (work tree and .git, symlinks kept as links)."""
    shutil.copytree(src, dest, symlinks=True)
    return dest


def make_fixture_repo(where: Path) -> Path:
    """A fresh git repo at `where` holding a copy of the shipped fixture, committed."""
    shutil.copytree(FIXTURE, where)
    git(where, "init", "-q")
    commit_all(where, "fixture")
    return where
