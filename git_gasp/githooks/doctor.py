"""`git gasp doctor`: is this clone wired for multiplayer git? Each finding with its fix."""

from __future__ import annotations

import os
import shlex
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from git_gasp.base.errors import GaspError
from git_gasp.base.git import (
    config_get,
    config_origin,
    git_dir,
    git_path,
    is_ignored,
    is_tracked,
    work_tree_top,
)
from git_gasp.githooks import install, managers
from git_gasp.store import attributes
from git_gasp.store.lease import LeaseCorrupt, parse_lease

OK, WARN, ERROR = "ok", "warn", "error"
LEASE = ".agent/lease"
IGNORED = (LEASE, ".agent/HEAD")


@dataclass
class Finding:
    level: str  # ok | warn | error
    message: str
    fix: str | None = None

    def to_text(self) -> str:
        text = f"{self.level:<5} {self.message}"
        return text + (f"\n      fix: {self.fix}" if self.fix else "")


def diagnose(root: Path, *, now_ms: int | None = None) -> list[Finding]:
    """Every finding for the agent at `root` (raises NotAGitRepo outside a work tree)."""
    top = work_tree_top(root)
    findings: list[Finding] = []
    _hooks(root, top, findings)
    _driver(root, findings)
    _lease(root, findings, now_ms if now_ms is not None else int(time.time() * 1000))
    _ignored(root, findings)
    return findings


def _hooks(root: Path, top: Path, findings: list[Finding]) -> None:
    hooks_dir = git_path(root, "hooks")
    hooks_path = config_get(root, "core.hooksPath")
    if hooks_path is not None:
        origin = config_origin(root, "core.hooksPath") or "git config"
        default = git_dir(root) / "hooks"
        level = WARN
        fix = None
        if not hooks_dir.is_dir():
            level, fix = ERROR, (f"create {hooks_dir} or unset core.hooksPath "
                                 "(`git config --unset core.hooksPath`), then run "
                                 "`git gasp install-hooks`")
        findings.append(Finding(level, f"core.hooksPath = {hooks_path} ({origin}): git runs "
                                f"hooks from {hooks_dir}, not {default}", fix))
        for name in install.HOOKS:
            stray = default / name
            if stray.is_file() and install.hook_version(_bytes(stray) or b"") is not None \
                    and stray != hooks_dir / name:
                findings.append(Finding(ERROR, f"the GASP hook in {stray} is never run: "
                                        "core.hooksPath points elsewhere",
                                        "run `git gasp install-hooks` to install it where git "
                                        "looks"))
    for name in install.HOOKS:
        _hook(top, hooks_dir, hooks_path, name, findings)


_UNGUARDED = {
    install.HOOK: "commits are not guarded",
    install.MERGE_HOOK: "merges that go through without a conflict are committed unguarded "
                        "(git runs pre-merge-commit for them, not pre-commit)",
}


def _hook(top: Path, hooks_dir: Path, hooks_path: str | None, name: str,
          findings: list[Finding]) -> None:
    hook = hooks_dir / name
    data = _bytes(hook)
    manager = managers.detect(top, hooks_dir, hooks_path, data)
    if data is None:
        if manager is not None:
            findings.append(_managed(manager, name))
        else:
            findings.append(Finding(ERROR, f"no {name} hook in {hooks_dir}: {_UNGUARDED[name]}",
                                    "run `git gasp install-hooks`"))
        return
    version = install.hook_version(data)
    if version is None:
        if manager is not None:
            findings.append(_managed(manager, name))
        elif any(w in data for w in (b"git gasp hook", b"git-gasp hook")):
            findings.append(Finding(OK, f"{hook} runs the GASP guard (not our script)"))
        else:
            findings.append(Finding(ERROR, f"{hook} is not the GASP hook and does not run the "
                                    "guard", "run `git gasp install-hooks` (your hook is kept "
                                    f"as {install.legacy_name(name)} and still runs)"))
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


def _managed(manager: managers.Manager, name: str = install.HOOK) -> Finding:
    if name == install.MERGE_HOOK:
        if manager.merge_wired:
            return Finding(OK, f"{manager.name} runs the GASP guard for merge commits")
        return Finding(WARN if manager.wired else ERROR,
                       f"{manager.name} does not run the GASP guard as pre-merge-commit: "
                       f"{_UNGUARDED[name]}", f"add to {manager.config}:\n{manager.snippet}")
    if manager.wired:
        return Finding(OK, f"{manager.name} runs the GASP guard ({manager.config})")
    return Finding(ERROR, f"{manager.name} manages the hooks but does not run the GASP guard",
                   f"add to {manager.config}:\n{manager.snippet}")


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
                                "to a text merge", "run `git gasp install-hooks`"))
    elif driver is not None:
        exe = _first_word(driver)
        if exe and not (os.access(exe, os.X_OK) or shutil.which(exe)):
            findings.append(Finding(ERROR, f"merge.gasp.driver runs {exe}, which does not exist",
                                    "run `git gasp install-hooks` to register it again"))
        else:
            findings.append(Finding(OK, "merge driver registered (merge.gasp.driver)"))
    if log not in using:
        findings.append(Finding(WARN, f"{log} is not merged with merge=gasp: branches that both "
                                "append will conflict or lose lines", "run `git gasp "
                                "install-hooks` and commit .gitattributes"))


def _first_word(command: str) -> str:
    try:
        words = shlex.split(command)
    except ValueError:
        return ""
    return words[0] if words else ""


def _lease(root: Path, findings: list[Finding], now_ms: int) -> None:
    path = root / LEASE
    data = _bytes(path)
    if data is None:
        return
    fix = f"if no worker is running, remove {LEASE}"
    try:
        lease = parse_lease(data)  # the runtime's verdict, so doctor and writers agree
    except LeaseCorrupt:
        findings.append(Finding(ERROR, f"{LEASE} is corrupt: expected "
                                '{"worker_id": non-empty str, "pid": int, "expires_at_ms": int}; '
                                "no worker can take or renew it", fix))
        return
    if lease.expired(now_ms):
        ago = (now_ms - lease.expires_at_ms) // 1000
        findings.append(Finding(WARN, f"{LEASE} of worker {lease.worker_id} (pid "
                                f"{lease.pid}) expired {ago}s ago: stale", "the next worker "
                                f"takes it over; or {fix}"))
    else:
        findings.append(Finding(OK, f"{LEASE} held by worker {lease.worker_id} (pid "
                                f"{lease.pid}) until {lease.expires_at_ms}"))


def _ignored(root: Path, findings: list[Finding]) -> None:
    for rel in IGNORED:
        if is_tracked(root, rel):
            findings.append(Finding(ERROR, f"{rel} is committed; it is per-clone state",
                                    f"git rm --cached {rel} and add it to .gitignore"))
        elif not is_ignored(root, rel):
            findings.append(Finding(ERROR, f"{rel} is not gitignored: it may be committed",
                                    f"add the line `{rel}` to {root / '.gitignore'}"))


def _bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise GaspError(f"cannot read {path}: {exc}") from None


def report(findings: list[Finding], label: str) -> tuple[str, int]:
    """The printed report and the exit status (1 if any finding is an error)."""
    errors = sum(f.level == ERROR for f in findings)
    warns = sum(f.level == WARN for f in findings)
    lines = [f"git gasp doctor: {label}", *(f.to_text() for f in findings)]
    if errors:
        lines.append(f"{errors} problem{'s' * (errors != 1)} to fix"
                     + (f", {warns} warning{'s' * (warns != 1)}" if warns else ""))
    else:
        lines.append("healthy" + (f" ({warns} warning{'s' * (warns != 1)})" if warns else ""))
    return "\n".join(lines), 1 if errors else 0
