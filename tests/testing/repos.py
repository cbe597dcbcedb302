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


def make_project(where: Path) -> Path:
    """An existing project at `where`, not made by git-gasp: two commits of its own."""
    where.mkdir(parents=True)
    git(where, "init", "-q", "-b", "main")
    (where / "app.py").write_text("print('hi')\n")
    git(where, "add", "app.py")
    git(where, "commit", "-qm", "app")
    (where / "README").write_text("an app\n")
    git(where, "add", "README")
    git(where, "commit", "-qm", "readme")
    return where


def init_branch(project: Path, *args: str) -> Path:
    """`git gasp init --branch ARGS` in `project`; the state's worktree path."""
    proc = gasp(project, "init", "--branch", *args)
    assert proc.returncode == 0, out(proc)
    common = git(project, "rev-parse", "--path-format=absolute", "--git-common-dir").strip()
    return (Path(common) / git(project, "config", "gasp.state").strip()).resolve()
