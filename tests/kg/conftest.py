"""Fixtures for `git gasp kg` tests: a private state home and a bare remote."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kg.helpers import kg
from tests.testing.run import git


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """PERSTATE_HOME in a temp dir (the hermetic fixture already isolates HOME)."""
    h = tmp_path / "perstate-home"
    monkeypatch.setenv("PERSTATE_HOME", str(h))
    monkeypatch.delenv("PERSTATE_SESSION_ID", raising=False)
    monkeypatch.setenv("PERSTATE_SYNC_WINDOW", "0")
    return h


@pytest.fixture
def remote(tmp_path) -> Path:
    r = tmp_path / "memory.git"
    git(tmp_path, "init", "--quiet", "--bare", "-b", "main", str(r))
    return r


@pytest.fixture
def graph(tmp_path, home, remote):
    """An initialised graph: (cwd, worktree path) with session `s1` bound to main."""
    kg(tmp_path, "init", "--repo", str(remote), "--branch", "main", "--yes", "--session-id", "s1")
    wt = home / "worktrees" / "memory" / "main"
    assert (wt / "schema" / "ontology.md").is_file()
    return tmp_path, wt
