"""Helpers for runtime tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.testing.run import gasp, out


def assert_conformant(repo: Path) -> None:
    proc = gasp(repo, "check")
    assert proc.returncode == 0, out(proc)


def run_py(code: str, *args: str, cwd: Path | None = None,
           timeout: float = 120) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter (argv[1:] = args)."""
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)


def one_error_line(proc: subprocess.CompletedProcess) -> str:
    """The single `git gasp: error: …` line a failed command prints (asserted)."""
    err = proc.stderr.decode(errors="replace") if isinstance(proc.stderr, bytes) else proc.stderr
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert proc.returncode == 1, (proc.returncode, err)
    assert len(lines) == 1 and lines[0].startswith("git gasp: error: "), err
    assert "Traceback" not in err
    return lines[0]
