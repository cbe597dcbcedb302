"""Run the installed `git-gasp` with a pseudo-terminal for stdin, stdout and stderr."""

from __future__ import annotations

import os
import pty
import subprocess
from pathlib import Path

from tests.testing.run import git_gasp_exe


def on_a_tty(cwd: Path, *args: str, env: dict | None = None) -> tuple[int, bytes]:
    """(exit code, all it wrote) of `git-gasp ARGS` on a terminal."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen([*git_gasp_exe(), *args], cwd=cwd, stdin=follower,
                            stdout=follower, stderr=follower,
                            env={**os.environ, **(env or {})})
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the terminal's other side closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    return proc.wait(), b"".join(chunks)
