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


def record_run(project: Path, title: str) -> None:
    """One committed run with a goal: run start, record goal, run finish, commit-run."""
    for args in (("run", "start", "--task", title), ("record", "goal", "--title", title),
                 ("run", "finish", "--outcome", "promoted"), ("commit-run",)):
        proc = gasp(project, *args)
        assert proc.returncode == 0, (args, out(proc))


def shared_project(tmp_path: Path) -> tuple[Path, Path]:
    """(a project with its state on gasp/state, the bare remote it shares both through):
    main pushed, `init --branch`, one run, `sync`."""
    project = make_project(tmp_path / "alice")
    bare = tmp_path / "shared.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(project, "remote", "add", "origin", str(bare))
    git(project, "push", "-q", "origin", "main")
    init_branch(project)
    record_run(project, "alice's run")
    proc = gasp(project, "sync")
    assert proc.returncode == 0, out(proc)
    return project, bare
