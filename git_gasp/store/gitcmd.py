"""Run git itself for what only git resolves exactly: hook paths, config, attributes."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from git_gasp.errors import GaspError, NotAGitRepo


def run_git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run ``git -C cwd args``; raise GaspError (one line) when `check` and it fails."""
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    except FileNotFoundError:
        raise GaspError("git is not installed (or not on PATH)") from None
    except OSError as exc:
        raise GaspError(f"cannot run git: {exc}") from None
    if check and proc.returncode != 0:
        msg = proc.stderr.decode(errors="replace").strip().splitlines()
        raise GaspError(f"git {' '.join(args)} failed: {msg[-1] if msg else proc.returncode}")
    return proc


def _path_out(cwd: Path, proc: subprocess.CompletedProcess) -> Path:
    text = os.fsdecode(proc.stdout.rstrip(b"\n"))
    return Path(os.path.normpath(cwd / text))


def work_tree_top(cwd: Path) -> Path:
    """The top of the work tree around `cwd` (raises NotAGitRepo)."""
    proc = run_git(cwd, "rev-parse", "--show-toplevel", check=False)
    if proc.returncode != 0 or not proc.stdout.strip():
        raise NotAGitRepo(f"{cwd} is not inside a git work tree")
    return Path(os.fsdecode(proc.stdout.rstrip(b"\n")))


def git_path(cwd: Path, name: str) -> Path:
    """`git rev-parse --git-path NAME` as an absolute path (honours core.hooksPath,
    linked worktrees and GIT_DIR)."""
    return _path_out(cwd, run_git(cwd, "rev-parse", "--git-path", name))


def git_dir(cwd: Path) -> Path:
    """This work tree's git dir (for a linked worktree, its own dir under worktrees/)."""
    return _path_out(cwd, run_git(cwd, "rev-parse", "--git-dir"))


def config_get(cwd: Path, key: str) -> str | None:
    """The effective value of `key` (any scope), or None when unset."""
    proc = run_git(cwd, "config", "--get", key, check=False)
    return os.fsdecode(proc.stdout.rstrip(b"\n")) if proc.returncode == 0 else None


def config_origin(cwd: Path, key: str) -> str | None:
    """Where the effective value of `key` comes from (``file:<path>``), or None."""
    proc = run_git(cwd, "config", "--show-origin", "--get", key, check=False)
    if proc.returncode != 0:
        return None
    return os.fsdecode(proc.stdout).split("\t", 1)[0]


def config_set_local(cwd: Path, key: str, value: str) -> None:
    run_git(cwd, "config", "--local", key, value)


def config_unset_local(cwd: Path, key: str) -> None:
    run_git(cwd, "config", "--local", "--unset-all", key, check=False)


def check_attr(cwd: Path, attr: str, paths: list[str]) -> dict[str, str]:
    """`git check-attr ATTR -- PATHS` (paths relative to `cwd`): path -> value."""
    if not paths:
        return {}
    proc = run_git(cwd, "check-attr", "-z", attr, "--", *paths)
    fields = os.fsdecode(proc.stdout).split("\0")
    return {fields[i]: fields[i + 2] for i in range(0, len(fields) - 2, 3)}


def is_ignored(cwd: Path, path: str) -> bool:
    """True when git would ignore `path` (relative to `cwd`), tracked or not."""
    return run_git(cwd, "check-ignore", "-q", "--no-index", "--", path, check=False).returncode == 0


def is_tracked(cwd: Path, path: str) -> bool:
    proc = run_git(cwd, "ls-files", "--error-unmatch", "--", path, check=False)
    return proc.returncode == 0
