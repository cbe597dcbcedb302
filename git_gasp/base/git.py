"""The one git runner: every ``git`` process the package starts goes through `run`.

By default a command runs in an explicit `cwd` with a scrubbed environment: nothing
that redirects git to another repository, index or configuration is inherited
(``GIT_DIR``, ``GIT_WORK_TREE``, ``GIT_INDEX_FILE``, ``GIT_CONFIG_PARAMETERS``, …), so
a call made from inside a git hook or a user's odd shell acts on the repository at
`cwd` and nothing else. Code that must act on the caller's repository as git set it up
(the guard inside a hook) asks for ``inherit_git_env=True``. Output is bytes, git's
messages are in English (``LC_ALL=C``), credentials are never prompted for, and a
failure is one `GitError` carrying the command, exit code and git's stderr.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import BinaryIO

from git_gasp.base import gitdir
from git_gasp.base.errors import GaspError, NotAGitRepo

# Inherited GIT_* variables that only say *how* to talk to the user or which config
# files exist; everything else named GIT_* is dropped unless the caller asks for it.
_KEPT = frozenset({
    "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_EXEC_PATH",
    "GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT", "GIT_ASKPASS", "GIT_EDITOR",
    "GIT_PAGER", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE",
    "GIT_TRACE", "GIT_TRACE2", "GIT_TRACE2_EVENT", "GIT_TRACE_PERFORMANCE",
    "GIT_TEMPLATE_DIR", "GIT_SSL_NO_VERIFY", "GIT_SSL_CAINFO", "GIT_PROTOCOL_FROM_USER",
    "GIT_ALLOW_PROTOCOL", "GIT_CURL_VERBOSE", "GIT_HTTP_USER_AGENT",
})


# Options for a git run in the state branch's worktree: the project's own git hooks
# (``core.hooksPath`` or the common dir's hooks/) are not run for the state branch,
# which is git-gasp's (git looks a hook up under /dev/null/ and finds none).
NO_HOOKS = ("-c", "core.hooksPath=/dev/null")


class GitError(GaspError):
    """A git command exited non-zero (or could not start).

    `argv` is the command after ``git``, `returncode` its exit status and `stderr`
    git's message; the one-line message names the command and git's last line.
    """

    def __init__(self, argv: Sequence[str], returncode: int, stderr: str) -> None:
        lines = stderr.strip().splitlines()
        detail = lines[-1] if lines else f"exit status {returncode}"
        shown = " ".join(a for a in argv if not a.startswith("core.quotepath"))
        super().__init__(f"git {shown} failed: {detail}")
        self.argv = list(argv)
        self.returncode = returncode
        self.stderr = stderr


def git_env(extra: Mapping[str, str] | None = None, *, inherit_git_env: bool = False
            ) -> dict[str, str]:
    """The environment a git command runs in (see the module docstring)."""
    env = {k: v for k, v in os.environ.items()
           if inherit_git_env or not k.startswith("GIT_") or k in _KEPT}
    env["LC_ALL"] = "C"
    env["GIT_TERMINAL_PROMPT"] = "0"
    if extra:
        env.update(extra)
    return env


def run(
    cwd: Path | str,
    *args: str,
    check: bool = True,
    input: bytes | None = None,
    env: Mapping[str, str] | None = None,
    inherit_git_env: bool = False,
    capture: bool = True,
    timeout: float | None = None,
    output: BinaryIO | None = None,
    pass_fds: Sequence[int] = (),
) -> subprocess.CompletedProcess:
    """Run ``git ARGS`` in `cwd`; raise `GitError` when `check` and it fails.

    `env` adds variables to the scrubbed environment; `capture=False` lets git
    talk to the terminal (stdout/stderr inherited, no stdin unless `input`);
    `output`: a file that gets git's stdout and stderr (no pipe, so a git that
    outlives a killed caller is not killed by SIGPIPE halfway; the returned
    process then holds no output); `pass_fds`: descriptors git inherits (a lock
    held until git and its children are done too).
    """
    argv = ["git", "-c", "core.quotepath=off", *args]
    try:
        proc = subprocess.run(
            argv, cwd=os.fspath(cwd), input=input,
            stdin=None if input is not None else subprocess.DEVNULL,
            stdout=output if output is not None else subprocess.PIPE if capture else None,
            stderr=output if output is not None else subprocess.PIPE if capture else None,
            env=git_env(env, inherit_git_env=inherit_git_env), check=False, timeout=timeout,
            pass_fds=tuple(pass_fds),
        )
    except FileNotFoundError:
        raise GaspError("git is not installed (or not on PATH)") from None
    except subprocess.TimeoutExpired:
        raise GitError(list(args), -1, f"timed out after {timeout} s") from None
    except OSError as exc:
        raise GaspError(f"cannot run git: {exc}") from None
    if check and proc.returncode != 0:
        stderr = proc.stderr.decode(errors="replace") if proc.stderr else ""
        raise GitError(list(args), proc.returncode, stderr)
    return proc


def out(cwd: Path | str, *args: str, check: bool = True, **kw) -> str:
    """stdout of a git command as text, trailing newlines stripped."""
    return os.fsdecode(run(cwd, *args, check=check, **kw).stdout.rstrip(b"\n"))


def ok(cwd: Path | str, *args: str, **kw) -> bool:
    """True when the git command exits 0."""
    return run(cwd, *args, check=False, **kw).returncode == 0


def _path_out(cwd: Path | str, text: str) -> Path:
    return Path(os.path.normpath(Path(cwd) / text))


def work_tree_top(cwd: Path | str) -> Path:
    """The top of the work tree around `cwd` (raises NotAGitRepo)."""
    proc = run(cwd, "rev-parse", "--show-toplevel", check=False)
    if proc.returncode != 0 or not proc.stdout.strip():
        raise NotAGitRepo(f"{cwd} is not inside a git work tree")
    return Path(os.fsdecode(proc.stdout.rstrip(b"\n")))


def git_path(cwd: Path | str, name: str) -> Path:
    """`git rev-parse --git-path NAME` as an absolute path (honours core.hooksPath,
    linked worktrees)."""
    return _path_out(cwd, out(cwd, "rev-parse", "--git-path", name))


def git_dir(cwd: Path | str) -> Path:
    """This work tree's git dir (for a linked worktree, its own dir under worktrees/),
    found as git finds it (`base.gitdir.discover`); raises NotAGitRepo."""
    return Path(_discovered(cwd).path)


def common_dir(cwd: Path | str) -> Path:
    """The git dir shared by all worktrees of the repository (objects, refs, config);
    raises NotAGitRepo."""
    return Path(_discovered(cwd).common)


def _discovered(cwd: Path | str) -> gitdir.GitDir:
    found = gitdir.discover(cwd)
    if found is None:
        raise NotAGitRepo(f"{cwd} is not inside a git repository")
    return found


def resolve_commit(cwd: Path | str, rev: str) -> str | None:
    """The full id of the commit `rev` names, or None when it names no commit."""
    if rev.startswith("-"):
        return None
    proc = run(cwd, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}",
               check=False)
    return os.fsdecode(proc.stdout.strip()) if proc.returncode == 0 else None


def config_get(cwd: Path | str, key: str) -> str | None:
    """The effective value of `key` (any scope), or None when unset."""
    proc = run(cwd, "config", "--get", key, check=False)
    return os.fsdecode(proc.stdout.rstrip(b"\n")) if proc.returncode == 0 else None


def config_origin(cwd: Path | str, key: str) -> str | None:
    """Where the effective value of `key` comes from (``file:<path>``), or None."""
    proc = run(cwd, "config", "--show-origin", "--get", key, check=False)
    if proc.returncode != 0:
        return None
    return os.fsdecode(proc.stdout).split("\t", 1)[0]


def config_set_local(cwd: Path | str, key: str, value: str) -> None:
    """Set `key` in the repository's own config."""
    run(cwd, "config", "--local", key, value)


def config_unset_local(cwd: Path | str, key: str) -> None:
    """Remove every value of `key` from the repository's own config (absent is fine)."""
    run(cwd, "config", "--local", "--unset-all", key, check=False)


def check_attr(cwd: Path | str, attr: str, paths: list[str]) -> dict[str, str]:
    """`git check-attr ATTR -- PATHS` (paths relative to `cwd`): path -> value."""
    if not paths:
        return {}
    proc = run(cwd, "check-attr", "-z", attr, "--", *paths)
    fields = os.fsdecode(proc.stdout).split("\0")
    return {fields[i]: fields[i + 2] for i in range(0, len(fields) - 2, 3)}


def is_ignored(cwd: Path | str, path: str) -> bool:
    """True when git would ignore `path` (relative to `cwd`), tracked or not."""
    return ok(cwd, "check-ignore", "-q", "--no-index", "--", path)


def is_tracked(cwd: Path | str, path: str) -> bool:
    """True when `path` (relative to `cwd`) is in the index."""
    return ok(cwd, "ls-files", "--error-unmatch", "--", path)


def have_git() -> None:
    """Raise a one-line GaspError when no git is on PATH."""
    import shutil  # here: shutil (bz2, lzma, fnmatch) is 2 ms CPU of every guarded commit

    if shutil.which("git") is None:
        raise GaspError("git is not installed (or not on PATH)")
