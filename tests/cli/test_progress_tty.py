"""Progress switches on with a pseudo-terminal and off on a pipe or with --json, for
import and the kg index build (check's walk: tests/conformance/test_check_progress.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.adapters.samples import CLAUDE_TRANSCRIPT
from tests.testing.run import git_gasp_exe
from tests.testing.tty import on_a_tty

pytestmark = pytest.mark.slow

NOW = {"GASP_PROGRESS_DELAY": "0"}


def tty_run(cwd: Path, *args: str) -> tuple[int, bytes]:
    return on_a_tty(cwd, *args, env=NOW)


def pipe_run(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*git_gasp_exe(), *args], cwd=cwd, capture_output=True,
                          env={**os.environ, **NOW})


def test_import_progress_on_a_terminal_only(agent, tmp_path):
    second = tmp_path / "again.jsonl"
    shutil.copy(CLAUDE_TRANSCRIPT, second)
    files = [str(CLAUDE_TRANSCRIPT), str(second)]
    code, shown = tty_run(agent, "import", "claude-code", *files, "--no-commit")
    assert code == 0, shown
    assert b"\rimport: 1/2 files" in shown and b"\rimport: 2/2 files" in shown
    assert b"already imported" in shown
    piped = pipe_run(agent, "import", "claude-code", *files, "--no-commit")
    assert b"import:" not in piped.stderr and piped.returncode == 0
    code, shown = tty_run(agent, "import", "claude-code", *files, "--no-commit", "--json")
    assert b"import: " not in shown
