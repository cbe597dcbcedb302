"""The suite's fixtures: a hermetic git environment, the shipped fixture and an agent repo.

Every test runs with an isolated HOME, GIT_CONFIG_NOSYSTEM=1, no inherited GIT_*
variable and fixed dates, so nothing from the developer's machine leaks in. Helpers
live in tests/testing/ (import them from there; this file exports nothing), and this
is the suite's one conftest with fixtures for everyone.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.testing.hermetic import isolate
from tests.testing.repos import copy_repo, init_agent, make_fixture_repo

# pytest keeps the test modules it rewrote (assertion rewriting) as bytecode; with
# PYTHONDONTWRITEBYTECODE set (as on some CI machines) it redoes all of it every run
# (~7 s of the fast loop). The tests' own caches are in .gitignore'd __pycache__/.
sys.dont_write_bytecode = False


@pytest.fixture(autouse=True)
def hermetic(tmp_path_factory, monkeypatch):
    """Isolate HOME and git config; pin author/committer identity and dates."""
    yield isolate(monkeypatch, tmp_path_factory.mktemp("home"))


@pytest.fixture(scope="session")
def agent_template(tmp_path_factory) -> Path:
    """`git gasp init agent --agent-id tester`, built once per session (so once per
    xdist worker, under its own basetemp): copy, never edit."""
    with pytest.MonkeyPatch.context() as mp:
        isolate(mp, tmp_path_factory.mktemp("template-home"))
        return init_agent(tmp_path_factory.mktemp("template"))


@pytest.fixture
def agent(agent_template, tmp_path) -> Path:
    """A fresh `git gasp init` repo at tmp_path/agent (agent id `tester`): the layout
    committed, the guard and merge driver installed. A copy of the session's template."""
    return copy_repo(agent_template, tmp_path / "agent")


@pytest.fixture
def fixture_repo(tmp_path) -> Path:
    """A fresh git repo holding a copy of the shipped fixture, committed."""
    return make_fixture_repo(tmp_path / "agent")
