"""The live hook's opt-in sync: `adapt claude-code install --sync` sets gasp.sync in the
clone, and the session's boundary commit is then pushed by `git gasp sync` from the
hook itself; without the opt-in nothing is pushed."""

from __future__ import annotations

import pytest

from git_gasp.adapters.agent_hook_sync import CONFIG_KEY, REQUEST, enabled, request, set_enabled
from git_gasp.adapters.session_writer import run_id_for
from tests.adapters.test_live import CLAUDE_HOOKS, CLAUDE_SID, adapter_log, payloads, replay
from tests.testing.run import gasp, git, out


@pytest.fixture
def pushed_agent(agent, tmp_path):
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(agent, "remote", "add", "origin", str(remote))
    git(agent, "push", "-q", "-u", "origin", "main")
    return agent, remote


def test_opt_in_and_out_is_one_config_key(agent):
    assert not enabled(agent) and not request(agent)
    assert "gasp.sync = true" in set_enabled(agent, True)
    assert enabled(agent) and request(agent)
    assert (agent / ".git" / "gasp" / REQUEST).exists()
    assert "removed" in set_enabled(agent, False) and not enabled(agent)
    assert set_enabled(agent, False) == ""


@pytest.mark.slow
def test_the_boundary_commit_is_synced_when_the_clone_opted_in(pushed_agent):
    agent, remote = pushed_agent
    proc = gasp(agent, "adapt", "claude-code", "install", "--sync", "--repo", str(agent))
    assert proc.returncode == 0, out(proc)
    assert git(agent, "config", "--get", CONFIG_KEY).strip() == "true"
    replay(agent, payloads(CLAUDE_HOOKS, agent))
    log = adapter_log(agent)
    assert "sync: pushed" in log, log
    tip = git(remote, "rev-parse", "main").strip()
    assert tip == git(agent, "rev-parse", "HEAD").strip()
    assert f"Run-Id: {run_id_for('claude-code', CLAUDE_SID)}" in git(
        remote, "log", "-1", "--format=%B", "main")
    assert not (agent / ".git" / "gasp" / REQUEST).exists()
    proc = gasp(agent, "adapt", "claude-code", "install", "--uninstall", "--repo", str(agent))
    assert proc.returncode == 0 and "removed gasp.sync" in out(proc)


@pytest.mark.slow
def test_without_the_opt_in_nothing_is_pushed(pushed_agent):
    agent, remote = pushed_agent
    before = git(remote, "rev-parse", "main")
    replay(agent, payloads(CLAUDE_HOOKS, agent))
    assert "sync:" not in adapter_log(agent)
    assert git(remote, "rev-parse", "main") == before
