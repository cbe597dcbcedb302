"""A teammate's clone joins the project's agent history: where a remote has
`gasp/state`, `init --branch` attaches (a local branch tracking it, a worktree, the
config) instead of forking a second agent; before that, commands name the command."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.testing.repos import make_project, record_run, shared_project
from tests.testing.run import gasp, git, out

# clones through a bare remote and joins through the CLI: many git processes a test
pytestmark = pytest.mark.slow


@pytest.fixture
def shared(tmp_path: Path) -> tuple[Path, Path]:
    """(the first person's project, a bare remote both share), the state pushed."""
    return shared_project(tmp_path)


def test_a_clone_is_told_to_join_and_joins_the_same_agent(shared, tmp_path: Path) -> None:
    alice, bare = shared
    bob = tmp_path / "bob"
    git(tmp_path, "clone", "-q", str(bare), str(bob))
    proc = gasp(bob, "status")
    assert proc.returncode == 2
    assert "git gasp init --branch" in out(proc) and "origin/gasp/state" in out(proc)
    proc = gasp(bob, "init", "--branch")
    assert proc.returncode == 0, out(proc)
    assert "joined agent" in out(proc)
    assert git(bob, "rev-parse", "gasp/state") == git(alice, "rev-parse", "gasp/state")
    assert git(bob, "rev-parse", "--abbrev-ref", "gasp/state@{u}").strip() == \
        "origin/gasp/state"
    log = gasp(bob, "log", "--json")
    assert log.returncode == 0 and "alice's run" in out(log), out(log)
    record_run(bob, "bob's run")
    proc = gasp(bob, "sync")
    assert proc.returncode == 0, out(proc)  # no "refusing to merge unrelated histories"
    assert gasp(alice, "sync").returncode == 0
    titles = out(gasp(alice, "log", "--json"))
    assert "bob's run" in titles and "alice's run" in titles
    assert gasp(alice, "check").returncode == 0 and gasp(bob, "check").returncode == 0
    assert git(bob, "status", "--porcelain") == ""
    assert "AGENT.md" not in git(bob, "ls-tree", "--name-only", "main")


def test_join_refuses_agent_id_and_changes_nothing(shared, tmp_path: Path) -> None:
    _alice, bare = shared
    bob = tmp_path / "bob"
    git(tmp_path, "clone", "-q", str(bare), str(bob))
    config = (bob / ".git" / "config").read_bytes()
    proc = gasp(bob, "init", "--branch", "--agent-id", "mine")
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, out(proc)
    assert (bob / ".git" / "config").read_bytes() == config
    assert git(bob, "branch", "--list", "gasp/state") == ""


def test_join_refuses_a_remote_branch_that_is_no_agent(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    bare = tmp_path / "r.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(project, "push", "-q", str(bare), "main:gasp/state", "main:main")
    clone = tmp_path / "c"
    git(tmp_path, "clone", "-q", str(bare), str(clone))
    worktrees = git(clone, "worktree", "list")
    proc = gasp(clone, "init", "--branch")
    assert proc.returncode == 1 and "no GASP manifest" in out(proc), out(proc)
    assert git(clone, "worktree", "list") == worktrees
    assert git(clone, "branch", "--list", "gasp/state") == ""


def test_status_json_names_the_joined_upstream(shared, tmp_path: Path) -> None:
    _alice, bare = shared
    bob = tmp_path / "bob"
    git(tmp_path, "clone", "-q", str(bare), str(bob))
    assert gasp(bob, "init", "--branch").returncode == 0
    status = json.loads(gasp(bob, "status", "--json").stdout)
    assert status["branch"]["upstream"] == "origin/gasp/state"


FAILING_HOOK = "#!/bin/sh\necho the project's hook ran >&2\nexit 1\n"


def _hooks(project: Path, *names: str) -> None:
    for name in names:
        hook = project / ".git" / "hooks" / name
        hook.write_text(FAILING_HOOK)
        hook.chmod(0o755)


def test_the_projects_git_hooks_do_not_run_for_the_state(shared, tmp_path: Path) -> None:
    """A post-checkout hook that fails does not stop `init --branch` (new or joined), a
    pre-push hook does not make every state sync exit 6."""
    alice, bare = shared
    _hooks(alice, "pre-push", "pre-commit", "post-merge", "commit-msg")
    record_run(alice, "second")
    proc = gasp(alice, "sync")
    assert proc.returncode == 0, out(proc)
    assert "the project's hook ran" not in out(proc)
    bob = tmp_path / "bob"
    git(tmp_path, "clone", "-q", str(bare), str(bob))
    _hooks(bob, "post-checkout")
    proc = gasp(bob, "init", "--branch")
    assert proc.returncode == 0, out(proc)
    fresh = make_project(tmp_path / "fresh")
    _hooks(fresh, "post-checkout")
    assert gasp(fresh, "init", "--branch").returncode == 0
    assert git(alice, "push", "-q", "origin", "main", check=False) == ""  # the hook is live


def test_a_failed_init_branch_takes_back_everything_in_reverse(tmp_path: Path) -> None:
    """A step that fails after the worktree was added (here: info/exclude cannot be
    written, as `.git/info` is a file) leaves no registered worktree, no branch, no
    config key, no file."""
    project = make_project(tmp_path / "p")
    shutil.rmtree(project / ".git" / "info", ignore_errors=True)
    (project / ".git" / "info").write_text("not a directory\n")
    config = (project / ".git" / "config").read_bytes()
    proc = gasp(project, "init", "--branch", "--worktree", str(project / "state-wt"))
    assert proc.returncode == 1, out(proc)
    assert proc.stderr.startswith(b"git gasp: error: cannot write ") and \
        len(proc.stderr.splitlines()) == 1, out(proc)
    assert (project / ".git" / "config").read_bytes() == config
    assert git(project, "worktree", "list").count("\n") == 1
    assert not (project / ".git" / "worktrees").exists() or not any(
        (project / ".git" / "worktrees").iterdir())
    assert git(project, "branch", "--list", "gasp/state") == ""
    assert not (project / "state-wt").exists()
