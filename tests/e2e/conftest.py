"""End-to-end fixtures: the real Claude Code and Codex CLIs, installed once from npm.

Skipped, with the reason, when npm is missing or the install fails (offline); CI
installs both so these always run there. Set GASP_E2E_CACHE to choose the cache dir.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.e2e import agents


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
