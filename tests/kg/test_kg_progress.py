"""The kg index build's progress: on a pseudo-terminal, not on a pipe or with --json."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.testing.run import git_gasp_exe
from tests.testing.tty import on_a_tty

pytestmark = pytest.mark.slow

NOW = {"GASP_PROGRESS_DELAY": "0"}


def tty_run(cwd: Path, *args: str) -> tuple[int, bytes]:
    return on_a_tty(cwd, *args, env=NOW)


def pipe_run(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*git_gasp_exe(), *args], cwd=cwd, capture_output=True,
                          env={**os.environ, **NOW})


def test_kg_index_build_progress_on_a_terminal_only(graph):
    from tests.kg.helpers import kg

    cwd, wt = graph
    kg(cwd, "save", "-", "--session-id", "s1",
       input="summary: s\nentities:\n  - label: Ada\n    type: person\n    body: b\n")
    gitdir = Path(subprocess.run(["git", "rev-parse", "--absolute-git-dir"], cwd=wt,
                                 capture_output=True, text=True, check=True).stdout.strip())
    index = gitdir / "perstate-index" / "index.bin"

    def rebuilt(*args: str):
        index.unlink(missing_ok=True)
        return args

    code, shown = tty_run(cwd, *rebuilt("kg", "info", "--session-id", "s1"))
    assert code == 0, shown
    assert b"\rkg index: read 1/1 files" in shown
    piped = pipe_run(cwd, *rebuilt("kg", "info", "--session-id", "s1"))
    assert b"kg index" not in piped.stderr
    code, shown = tty_run(cwd, *rebuilt("kg", "info", "--session-id", "s1", "--json"))
    assert b"kg index" not in shown
