"""`store.location`: one answer to "where is the state", for every command, the agent
hooks, sync and doctor. An explicit `gasp.state` wins over a walked-up AGENT.md, an
AGENT.md counts only when it is a GASP manifest, git config is read as git reads it
(never a guess from the word "worktree"), and a missing worktree of the state branch
is checked out again, not "no state"."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from git_gasp.store.location import find_root, is_manifest
from git_gasp.sync.sync import agent_root
from tests.testing.repos import init_branch, make_project, record_run
from tests.testing.run import gasp, git, out

TEAMMATE_MANIFEST = (b"# app\n\n```yaml\nspec_version: 1\nagent_id: other\n"
                     b"identity_hash: 00\nexecutor: .agent/config.toml\n```\n")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "app")


def _goal(project: Path, title: str) -> None:
    proc = gasp(project, "record", "goal", "--title", title)
    assert proc.returncode == 0, out(proc)


@pytest.mark.slow  # over half a second: out of the fast loop
def test_a_pulled_agent_md_does_not_hijack_the_configured_state(project: Path) -> None:
    """A teammate who used plain `init` pushed AGENT.md + state/events.jsonl at the top
    of main: the state branch stays where the events go, nothing lands on main."""
    state = init_branch(project)
    (project / "AGENT.md").write_bytes(TEAMMATE_MANIFEST)
    (project / "state").mkdir()
    (project / "state" / "events.jsonl").write_bytes(b"")
    git(project, "add", "AGENT.md", "state")
    git(project, "commit", "-qm", "a teammate's plain init")
    assert find_root(project) == str(state)
    _goal(project, "mine")
    assert (project / "state" / "events.jsonl").read_bytes() == b""
    assert b"mine" in (state / "state" / "events.jsonl").read_bytes()
    assert git(project, "status", "--porcelain") == ""


@pytest.mark.slow  # over half a second: out of the fast loop
def test_a_projects_own_agent_md_is_not_an_agent(project: Path) -> None:
    """Amp's convention: AGENT.md holds agent instructions, not a GASP manifest."""
    (project / "AGENT.md").write_text("# Agent instructions\n\nRun the tests first.\n")
    (project / "state").mkdir()
    (project / "state" / "events.jsonl").write_bytes(b"")
    assert not is_manifest(str(project))
    assert find_root(project) is None
    proc = gasp(project, "status")
    assert proc.returncode == 2 and "not an agent repository" in out(proc), out(proc)
    assert is_manifest(str(init_branch(project)))


@pytest.mark.parametrize("case", ["worktree-path", "branch-name", "sparse-checkout",
                                  "include", "include-if", "quoted"])
@pytest.mark.slow  # over half a second: out of the fast loop
def test_config_that_mentions_worktree_or_includes_is_read_as_git_reads_it(
        project: Path, tmp_path: Path, case: str) -> None:
    if case == "worktree-path":
        state = init_branch(project, "--worktree", str(tmp_path / "worktrees" / "x"))
    else:
        state = init_branch(project)
    if case == "branch-name":
        git(project, "branch", "worktree-fix")
        git(project, "config", "branch.worktree-fix.remote", "origin")
    elif case == "sparse-checkout":
        git(project, "sparse-checkout", "set", "--no-cone", "/*")
        assert git(project, "config", "extensions.worktreeConfig").strip() == "true"
    elif case in ("include", "include-if"):
        value = git(project, "config", "gasp.state").strip()
        git(project, "config", "--unset", "gasp.state")
        extra = tmp_path / "gasp.inc"
        extra.write_text(f"[gasp]\n\tstate = {value}\n")
        key = "include.path" if case == "include" else "includeIf.gitdir:/.path"
        git(project, "config", key, str(extra))
    elif case == "quoted":
        value = git(project, "config", "gasp.state").strip()
        with open(project / ".git" / "config", "a") as f:
            f.write(f'[gasp]\n\tstate = "{value}" ; a comment\n')
    assert find_root(project) == str(state)
    assert find_root(project / ".git") is None or find_root(project / ".git") == str(state)
    _goal(project, case)
    assert git(project, "status", "--porcelain") == ""


@pytest.mark.slow  # over half a second: out of the fast loop
def test_a_submodules_core_worktree_does_not_lose_the_state(project: Path,
                                                           tmp_path: Path) -> None:
    lib = make_project(tmp_path / "lib")
    git(project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "lib")
    git(project, "commit", "-qm", "lib")
    sub = project / "lib"
    state = init_branch(sub)
    assert "worktree" in git(sub, "config", "--list")  # core.worktree, in .git/modules/lib
    assert find_root(sub) == str(state)
    assert find_root(project) is None  # the outer project has no state of its own


@pytest.mark.slow  # over half a second: out of the fast loop
def test_a_deleted_worktree_is_checked_out_again(project: Path) -> None:
    state = init_branch(project)
    record_run(project, "before")
    shutil.rmtree(state)
    proc = gasp(project, "status")
    assert proc.returncode == 0, out(proc)
    assert "config names no state" not in out(proc)
    assert b"before" in (state / "state" / "events.jsonl").read_bytes()
    _goal(project, "after")
    assert gasp(project, "check").returncode == 0
    assert git(project, "worktree", "list").count("gasp-state") == 1


@pytest.mark.slow  # over half a second: out of the fast loop
def test_sync_finds_the_state_the_config_names(project: Path) -> None:
    state = init_branch(project)
    assert agent_root(project, project) == state
