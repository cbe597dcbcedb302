"""The harness itself: live Claude Code and Codex sessions against the scripted model.

Each session writes a bug, fails a test, fixes it and commits; hooks are recorded by a
tiny shell command. The transcript/rollout the agent wrote must read back and lift to
the whole spine: goal, eval Failed, failure, eval Passed, patch pinned to the commit
git made, decision promoting it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from git_gasp.adapters import claude_code, codex
from git_gasp.adapters.hooks import parse_hook_payload
from git_gasp.adapters.lifting import lift
from git_gasp.adapters.records import MODEL_RESPONSE, TOOL_USE
from tests.conftest import git
from tests.e2e import agents

# Fixtures live here, not in a conftest.py (a second conftest module would shadow
# tests/conftest.py for suites that `from conftest import` it).


def _binary(package: str, find) -> Path:
    prefix, why = agents.npm_install(package)
    if prefix is None:
        pytest.skip(f"end-to-end test needs {package}: {why}")
    binary = find(prefix)
    if binary is None:
        pytest.skip(f"{package} installed but its native binary was not found under {prefix}")
    return binary


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    return _binary(agents.CLAUDE_PKG, agents.claude_binary)


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    return _binary(agents.CODEX_PKG, agents.codex_binary)


@pytest.fixture
def app_repo(tmp_path) -> Path:
    """A git repo with one commit, where the agent works."""
    repo = tmp_path / "app"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "init"], cwd=repo, check=True)
    return repo


@pytest.fixture
def agent_home(tmp_path) -> Path:
    home = tmp_path / "agent-home"
    home.mkdir()
    return home


SPINE = ["goal", "eval", "failure", "eval", "patch", "decision"]


def _record_hooks(repo, settings_rel, log):
    path = repo / settings_rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": agents.hook_entries(f"cat >> {log}; echo >> {log}")}))


def _hooks(log):
    return [parse_hook_payload(line) for line in log.read_text().splitlines() if line.strip()]


def _check_session(session, transcript, repo, log, agent):
    assert session.proc.returncode == 0, session.describe()
    assert session.transcript is not None, session.describe()
    head = git(repo, "rev-parse", "HEAD").strip()
    assert git(repo, "log", "-1", "--format=%s").strip() == "Fix add"
    assert transcript.warnings == [] and transcript.session.agent_version is not None
    assert len(transcript.by_kind(MODEL_RESPONSE)) == 7
    assert len(transcript.by_kind(TOOL_USE)) == 6
    items = lift(transcript.records)
    assert [i.kind for i in items] == SPINE
    assert [i.data["status"] for i in items if i.kind == "eval"] == ["Failed", "Passed"]
    patch = items[4]
    assert patch.data["commit"] and head.startswith(patch.data["commit"])
    hooks = _hooks(log)
    assert {h.agent for h in hooks} == {agent}
    events = [h.event for h in hooks]
    assert events[0] == "SessionStart" and events[-1] == "SessionEnd"
    assert events.count("PreToolUse") == 6 and "Stop" in events
    assert {h.session_id for h in hooks} == {transcript.session.session_id}
    return hooks


def test_live_claude_code_session(claude_bin, app_repo, agent_home, tmp_path):
    log = tmp_path / "hooks.jsonl"
    _record_hooks(app_repo, ".claude/settings.json", log)
    session = agents.run_claude(claude_bin, app_repo, agent_home)
    assert session.transcript is not None, session.describe()
    t = claude_code.read_transcript(session.transcript)
    hooks = _check_session(session, t, app_repo, log, "claude-code")
    failures = [h for h in hooks if h.event == "PostToolUseFailure"]
    assert len(failures) == 1 and failures[0].exit_code == 1
    assert all(r[1].startswith("/v1/messages") for r in session.requests)


def test_live_codex_session(codex_bin, app_repo, agent_home, tmp_path):
    log = tmp_path / "hooks.jsonl"
    _record_hooks(app_repo, ".codex/hooks.json", log)
    session = agents.run_codex(codex_bin, app_repo, agent_home)
    assert session.transcript is not None, session.describe()
    t = codex.read_rollout(session.transcript)
    hooks = _check_session(session, t, app_repo, log, "codex")
    failed_call = [h for h in hooks if h.event == "PostToolUse"][2]
    assert codex.exit_code_for(session.transcript, failed_call.tool_use_id) == 1
    assert all(r[1] == "/v1/responses" for r in session.requests if r[0] == "POST")
