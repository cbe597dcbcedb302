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

# Tests left out of the fast loop (`pytest -m "not slow"`): they run the installed CLI
# end to end many times, drive real merges and history walks, live agent sessions or
# big hypothesis runs. Keyed on the test file (its path under tests/), and within a
# file on words of the test's name; the unit tests of every package stay in the fast
# loop. Packaging builds carry their own `slow` marks.
SLOW_FILES = {
    "adapters/test_import.py",
    "adapters/test_install_prime.py",
    "adapters/test_live.py",
    "adapters/test_planted_secrets.py",
    "bridges/test_planted_secrets.py",
    "cli/test_bad_input.py",
    "cli/test_cli_core.py",
    "cli/test_hostile_files.py",
    "conformance/test_check_properties.py",
    "conformance/test_integrity_history_properties.py",
    "conformance/test_logstate_properties.py",
    "conformance/test_rules_canonical.py",
    "e2e/test_beside_project.py",
    "e2e/test_live_sessions.py",
    "e2e/test_multiplayer_e2e.py",
    "githooks/test_install_hooks.py",
    "kg/test_kg_branches.py",
    "kg/test_kg_concurrency.py",
    "kg/test_kg_save.py",
    "kg/test_kg_search.py",
    "mcp/test_wiring.py",
    "merge/test_merge_git.py",
    "otel/test_planted_secrets.py",
    "protocol/test_properties.py",
    "runtime/test_cli_e2e.py",
    "runtime/test_reliability.py",
}
SLOW_NAMES = {
    "guard/test_guard.py": ("merge", "cache", "subdirectory", "worktree", "hooks_path",
                            "relocat"),
    "conformance/test_checks.py": ("check4", "snapshot", "subdirectory", "manifest_moved"),
    "conformance/test_history_pack.py": ("content_verdicts",),  # property tests over packs
    "kg/test_kg_view.py": ("5000", "chromium"),  # headless Chromium: seconds to a minute
}
TESTS = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config, items):
    """Mark `slow` the tests of SLOW_FILES and those SLOW_NAMES names."""
    for item in items:
        try:
            rel = Path(item.fspath).resolve().relative_to(TESTS).as_posix()
        except ValueError:
            continue
        name = getattr(item, "originalname", item.name)
        if rel in SLOW_FILES or any(w in name for w in SLOW_NAMES.get(rel, ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def hermetic(tmp_path_factory, monkeypatch):
    """Isolate HOME and git config; pin author/committer identity and dates."""
    yield isolate(monkeypatch, tmp_path_factory.mktemp("home"))


@pytest.fixture(scope="session")
def agent_template(tmp_path_factory) -> Path:
    """`git gasp init agent --agent-id tester`, built once per session: copy, never edit."""
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
