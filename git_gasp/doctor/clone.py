"""`git gasp doctor`: is this clone wired for multiplayer git? Each finding with its fix."""

from __future__ import annotations

import os
import shlex
import shutil
import time
from pathlib import Path

from git_gasp.base.errors import GaspError
from git_gasp.base.fileops import NotARegularFile, read_regular_file
from git_gasp.base.files import SMALL_FILE, read_file
from git_gasp.base.git import (
    config_get,
    config_origin,
    git_dir,
    git_path,
    is_ignored,
    is_tracked,
    work_tree_top,
)
from git_gasp.doctor import agent_state
from git_gasp.doctor.finding import ERROR, OK, WARN, Finding, exit_status, report
from git_gasp.githooks import install, managers
from git_gasp.githooks.manager_config import runs_guard
from git_gasp.store import attributes
from git_gasp.store.lease import MAX_LEASE_BYTES
from git_gasp.store.location import is_state_branch

LEASE = ".agent/lease"
IGNORED = (LEASE, ".agent/HEAD")

__all__ = ["ERROR", "OK", "WARN", "Finding", "diagnose", "exit_status", "report"]


def diagnose(root: Path, *, now_ms: int | None = None,
             project: Path | None = None) -> list[Finding]:
    """Every finding for the agent at `root`, whose `project` (where doctor runs: its
    agent hooks queue in its git dir) may hold it beside it (raises NotAGitRepo outside
    a work tree)."""
    top = work_tree_top(root)
    now = now_ms if now_ms is not None else int(time.time() * 1000)
    findings: list[Finding] = []
    _hooks(root, top, findings)
    _driver(root, findings)
    findings += _lease(root, now)
    findings += agent_state.log(root)
    findings += agent_state.queue(root, now, project)
    findings += agent_state.failed_commits(root)
    _ignored(root, findings)
    return findings


def _hooks(root: Path, top: Path, findings: list[Finding]) -> None:
    """The guard hooks where git runs them: `git rev-parse --git-path hooks`, which
    honours core.hooksPath, as `install-hooks` writes them."""
    hooks_dir = git_path(root, "hooks")
    hooks_path = config_get(root, "core.hooksPath")
    if hooks_path is not None:
        origin = config_origin(root, "core.hooksPath") or "git config"
        findings.append(Finding(OK, f"core.hooksPath = {hooks_path} ({origin}): git runs "
                                f"hooks from {hooks_dir}", topic="hooks-path"))
    told: set[str] = set()
    for name in install.HOOKS:
        _hook(root, top, hooks_dir, hooks_path, name, findings, told)


_UNGUARDED = {
    install.HOOK: "commits are not guarded",
    install.MERGE_HOOK: "merges that go through without a conflict are committed unguarded "
                        "(git runs pre-merge-commit for them, not pre-commit)",
}


def _stray(root: Path, hooks_dir: Path, name: str) -> str:
    """`; the GASP hook in .git/hooks/NAME is never run` when core.hooksPath moved the
    hooks away from a copy `init` left there."""
    stray = git_dir(root) / "hooks" / name
    if stray == hooks_dir / name or install.hook_version(_bytes(stray) or b"") is None:
        return ""
    return f"; the GASP hook in {stray} is never run (core.hooksPath points elsewhere)"


def _hook(root: Path, top: Path, hooks_dir: Path, hooks_path: str | None, name: str,
          findings: list[Finding], told: set[str]) -> None:
    hook = hooks_dir / name
    data = _bytes(hook)
    version = install.hook_version(data) if data is not None else None
    manager = managers.detect(top, hooks_dir, hooks_path, data) if version is None else None
    if manager is not None and is_state_branch(root):
        # the project's hooks are the project's: no fix goes into its committed config
        findings.append(Finding(OK, f"{manager.name} manages the project's {name} hook; "
                                "git-gasp's own commits on the state branch apply the guard"))
        return
    if manager is not None:
        findings.extend(_managed(manager, name, data, told))
        return
    if data is None:
        if is_state_branch(root):  # init --branch installs none: the hooks are shared
            findings.append(Finding(WARN, f"no {name} hook in {hooks_dir}: git-gasp's own "
                                    "commits on the state branch apply the guard, hand-made "
                                    "ones are not guarded", "run `git gasp install-hooks` "
                                    "(the project's commits then run it too; it passes them)"))
            return
        findings.append(Finding(ERROR, f"no {name} hook in {hooks_dir}: {_UNGUARDED[name]}"
                                + _stray(root, hooks_dir, name), "run `git gasp install-hooks`"))
        return
    if version is None:
        if managers_runs_guard(data):
            findings.append(Finding(OK, f"{hook} runs the GASP guard (not our script)"))
        else:
            findings.append(Finding(ERROR, f"{hook} is not the GASP hook and does not run the "
                                    "guard" + _stray(root, hooks_dir, name),
                                    "run `git gasp install-hooks` (your hook is kept as "
                                    f"{install.legacy_name(name)} and still runs)"))
        return
    problems = []
    if not os.access(hook, os.X_OK):
        problems.append(Finding(ERROR, f"{hook} is not executable: git skips it",
                                f"chmod +x {hook}"))
    if b"\r" in data:
        problems.append(Finding(ERROR, f"{hook} has CRLF line endings: /bin/sh cannot run it",
                                "run `git gasp install-hooks` to rewrite it"))
    if version != install.template_version():
        problems.append(Finding(WARN, f"{hook} is an older GASP hook (version {version or '?'}, "
                                f"current {install.template_version()})",
                                "run `git gasp install-hooks` to upgrade it"))
    if not _runner_exists(data):
        problems.append(Finding(ERROR, f"{hook} can run neither its interpreter nor git-gasp "
                                "on PATH: every commit will fail",
                                "install git-gasp again and run `git gasp install-hooks`"))
    legacy = hooks_dir / install.legacy_name(name)
    if legacy.exists() and not os.access(legacy, os.X_OK):
        problems.append(Finding(WARN, f"{legacy} is not executable, so it is not run",
                                f"chmod +x {legacy} if it should run"))
    findings.extend(problems)
    if not any(p.level == ERROR for p in problems):
        findings.append(Finding(OK, f"GASP {name} hook installed in {hooks_dir}"))


def managers_runs_guard(data: bytes) -> bool:
    """A hook script of someone else's that runs the guard (a command, not a comment)."""
    return any(runs_guard(line, comments=True)
               for line in data.decode("utf-8", "replace").splitlines())


def _managed(manager: managers.Manager, name: str, data: bytes | None,
             told: set[str]) -> list[Finding]:
    """What a hook manager's parsed config does for git's hook `name`."""
    if manager.problem is not None:
        if manager.problem in told:
            return []
        told.add(manager.problem)
        return [Finding(ERROR, f"{manager.name} manages the hooks but {manager.problem}",
                        f"fix {manager.config} ({manager.name} refuses it too)")]
    if not manager.runs(name):
        if name == install.MERGE_HOOK:
            level = WARN if manager.wired else ERROR
            return [Finding(level, f"{manager.name} does not run the GASP guard as "
                            f"pre-merge-commit ({manager.config}): {_UNGUARDED[name]}",
                            manager.fix(name))]
        return [Finding(ERROR, f"{manager.name} manages the hooks but {manager.config} does not "
                        f"run the GASP guard: {_UNGUARDED[name]}", manager.fix(name))]
    if manager.install is not None and not manager.installed(data):
        command = manager.install.format(hook=name)
        return [Finding(ERROR, f"{manager.config} runs the GASP guard as {name}, but "
                        f"{manager.name} has not installed that git hook: git never runs it",
                        f"run `{command}`")]
    what = "commits" if name == install.HOOK else "merge commits"
    return [Finding(OK, f"{manager.name} runs the GASP guard for {what} ({manager.config})")]


def _runner_exists(data: bytes) -> bool:
    values = {}
    for line in data.decode(errors="replace").splitlines():
        for key in ("gasp_python", "gasp_package"):
            if line.startswith(key + "="):
                try:
                    words = shlex.split(line[len(key) + 1:])
                except ValueError:
                    words = []
                values[key] = words[0] if words else ""
    python, package = values.get("gasp_python", ""), values.get("gasp_package", "")
    if python and os.access(python, os.X_OK) and os.path.isfile(package):
        return True
    return shutil.which("git-gasp") is not None


def _driver(root: Path, findings: list[Finding]) -> None:
    using = attributes.uses_gasp_merge(root)
    driver = config_get(root, "merge.gasp.driver")
    log = attributes.log_location(root)
    if using and driver is None:
        findings.append(Finding(ERROR, f".gitattributes says merge=gasp ({', '.join(using)}) but "
                                "this clone has no merge.gasp.driver: git silently falls back "
                                "to a text merge", "run `git gasp install` (once per machine) "
                                "or `git gasp install-hooks` (this clone)", topic="driver"))
    elif driver is not None:
        exe = _first_word(driver)
        if exe and not (os.access(exe, os.X_OK) or shutil.which(exe)):
            findings.append(Finding(ERROR, f"merge.gasp.driver runs {exe}, which does not exist",
                                    "run `git gasp install-hooks` to register it again",
                                    topic="driver"))
        else:
            findings.append(Finding(OK, "merge driver registered (merge.gasp.driver)",
                                    topic="driver"))
    if log not in using:
        findings.append(Finding(WARN, f"{log} is not merged with merge=gasp: branches that both "
                                "append will conflict or lose lines", "run `git gasp "
                                "install-hooks` and commit .gitattributes", topic="driver"))


def _first_word(command: str) -> str:
    try:
        words = shlex.split(command)
    except ValueError:
        return ""
    return words[0] if words else ""


def _ignored(root: Path, findings: list[Finding]) -> None:
    for rel in IGNORED:
        if is_tracked(root, rel):
            findings.append(Finding(ERROR, f"{rel} is committed; it is per-clone state",
                                    f"git rm --cached {rel} and add it to .gitignore",
                                    topic="ignores"))
        elif not is_ignored(root, rel):
            findings.append(Finding(ERROR, f"{rel} is not gitignored: it may be committed",
                                    f"add the line `{rel}` to {root / '.gitignore'}",
                                    topic="ignores"))


def _lease(root: Path, now_ms: int) -> list[Finding]:
    """The lease, read as every writer reads it: a link, FIFO or device is an error."""
    try:
        data = read_regular_file(root / LEASE, limit=MAX_LEASE_BYTES, root=root)
    except NotARegularFile as exc:
        return [Finding(ERROR, f"{LEASE} cannot be read: {exc}",
                        f"remove it (`rm {LEASE}`): it is local-only and must never be "
                        "committed", "lease")]
    except OSError as exc:
        raise GaspError(f"cannot read {root / LEASE}: {exc.strerror}") from None
    return agent_state.lease(root, now_ms, data)


def _bytes(path: Path) -> bytes | None:
    try:
        return read_file(path, limit=SMALL_FILE)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise GaspError(f"cannot read {path}: {exc}") from None
