"""Leaving is clean: after `init --branch`, `adapt … install` (every project scope,
--mcp), `install-hooks` and `install`, `git gasp uninstall` and `install --uninstall`
leave `git status` and `git config --list --show-origin` as they were before setup;
files that existed are given back byte for byte; the state stays unless --purge."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.testing.repos import make_project
from tests.testing.run import gasp, git, out

# every test sets a project up through the CLI (init --branch, adapt install,
# install-hooks) and takes it back
pytestmark = pytest.mark.slow

SETUP = (("init", "--branch"), ("install",),
         ("adapt", "claude-code", "install", "--mcp"),
         ("adapt", "claude-code", "install", "--scope", "local"),
         ("adapt", "codex", "install", "--mcp"),
         ("adapt", "gemini", "install", "--mcp"),
         ("adapt", "qwen-code", "install", "--mcp"),
         ("adapt", "copilot", "install"),
         ("install-hooks",))


def _snapshot(project: Path) -> tuple[str, str]:
    return (git(project, "status", "--porcelain", "--ignored", "--untracked-files=all"),
            git(project, "config", "--list", "--show-origin"))


def _setup(project: Path) -> None:
    for args in SETUP:
        proc = gasp(project, *args)
        assert proc.returncode == 0, (args, out(proc))


def test_uninstall_leaves_status_and_config_as_before(tmp_path: Path) -> None:
    project = make_project(tmp_path / "app")
    before = _snapshot(project)
    _setup(project)
    assert _snapshot(project) != before
    proc = gasp(project, "uninstall")
    assert proc.returncode == 0, out(proc)
    assert gasp(project, "install", "--uninstall").returncode == 0
    assert _snapshot(project) == before, out(proc)
    assert not (project / ".claude" / "settings.json").exists()
    assert not (project / ".mcp.json").exists()
    assert not (project / ".gemini" / "settings.json").exists()
    assert not (project / ".qwen" / "settings.json").exists()
    assert not (project / ".github" / "hooks" / "git-gasp.json").exists()
    assert git(project, "rev-parse", "--verify", "-q", "gasp/state")  # the state stays
    proc = gasp(project, "status")
    assert proc.returncode == 2, out(proc)


def test_files_that_existed_are_given_back_byte_for_byte(tmp_path: Path) -> None:
    project = make_project(tmp_path / "app")
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    mine = b'{ "permissions" :{"allow":["Bash(ls)"]},\n\n  "model": "opus"  }\n'
    settings.write_bytes(mine)
    mcp = project / ".mcp.json"
    mcp.write_bytes(b'{"mcpServers": {"other": {"command": "x"}}}')
    git(project, "add", ".")
    git(project, "commit", "-qm", "the project's own agent settings")
    before = _snapshot(project)
    _setup(project)
    assert settings.read_bytes() != mine
    assert gasp(project, "uninstall").returncode == 0
    assert gasp(project, "install", "--uninstall").returncode == 0
    assert settings.read_bytes() == mine
    assert mcp.read_bytes() == b'{"mcpServers": {"other": {"command": "x"}}}'
    assert _snapshot(project) == before


def test_purge_deletes_the_state_and_a_users_later_edit_is_kept(tmp_path: Path) -> None:
    project = make_project(tmp_path / "app")
    _setup(project)
    local = project / ".claude" / "settings.local.json"
    text = local.read_text()
    local.write_text(text.replace("{", '{"model": "mine",', 1))  # the user's own key
    proc = gasp(project, "uninstall", "--purge")
    assert proc.returncode == 0, out(proc)
    assert "left" in out(proc) and local.exists() and '"mine"' in local.read_text()
    assert git(project, "branch", "--list", "gasp/state") == ""
    assert "gasp-state" not in git(project, "worktree", "list")


def test_init_branch_after_uninstall_attaches_to_the_kept_state(tmp_path: Path) -> None:
    project = make_project(tmp_path / "app")
    assert gasp(project, "init", "--branch").returncode == 0
    assert gasp(project, "record", "goal", "--title", "kept").returncode == 0
    assert gasp(project, "commit-run").returncode == 0
    assert gasp(project, "uninstall").returncode == 0
    assert gasp(project, "status").returncode == 2
    proc = gasp(project, "init", "--branch")
    assert proc.returncode == 0 and "attached again" in out(proc), out(proc)
    assert "kept" in out(gasp(project, "log"))
    assert git(project, "rev-list", "--count", "gasp/state").strip() == "2"
