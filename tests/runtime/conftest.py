"""Helpers for runtime tests: fresh agent repos and (helpers live in helpers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import gasp, out


@pytest.fixture
def agent(tmp_path) -> Path:
    """A fresh agent repo made by `git gasp init`."""
    repo = tmp_path / "agent"
    repo.mkdir()
    proc = gasp(repo, "init", "--agent-id", "tester")
    assert proc.returncode == 0, out(proc)
    return repo
