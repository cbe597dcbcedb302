"""Running the `git` binary for the knowledge graph.

kg shells out to git (not dulwich) for clone, worktree, fetch, push, rebase and
commit: dulwich has no worktrees and no rebase, and the state home must stay
usable by Perstate's own shell scripts, which drive the same git. Every call
has an explicit cwd, never inherits GIT_DIR/GIT_WORK_TREE/GIT_INDEX_FILE from a
caller (a git hook, say), and never prompts for credentials.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from git_gasp.base.errors import GaspError

_SCRUB = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX", "GIT_COMMON_DIR")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _SCRUB}
    env["GIT_TERMINAL_PROMPT"] = "0"
    env.setdefault("LC_ALL", "C")
    return env


def have_git() -> None:
    import shutil

    if shutil.which("git") is None:
        raise GaspError("git is not installed or not on PATH")


class GitFailed(GaspError):
    """A git command exited non-zero; `stderr` holds its message."""

    def __init__(self, args: list[str], code: int, stderr: str) -> None:
        last = stderr.strip().splitlines()
        detail = last[-1] if last else f"exit {code}"
        super().__init__(f"git {' '.join(args[:2])} failed: {detail}")
        self.args_list = args
        self.code = code
        self.stderr = stderr


def run(
    cwd: Path | str,
    *args: str,
    check: bool = True,
    input: bytes | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess:
    """Run `git -c core.quotepath=off ARGS` in `cwd` and capture bytes output."""
    full_env = _env()
    if env:
        full_env.update(env)
    proc = subprocess.run(
        ["git", "-c", "core.quotepath=off", *args],
        cwd=str(cwd),
        input=input,
        capture_output=True,
        env=full_env,
        check=False,
    )
    if check and proc.returncode != 0:
        raise GitFailed(list(args), proc.returncode, proc.stderr.decode(errors="replace"))
    return proc


def out(cwd: Path | str, *args: str, check: bool = True) -> str:
    """stdout of a git command as stripped text."""
    return run(cwd, *args, check=check).stdout.decode(errors="replace").strip()


def ok(cwd: Path | str, *args: str) -> bool:
    """True when the git command exits 0."""
    return run(cwd, *args, check=False).returncode == 0
