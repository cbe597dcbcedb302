"""`git gasp install-hooks --server`: the pre-receive hook of a bare repository (the
remote agents push to). A pre-receive hook that was there is kept as
``pre-receive.legacy`` and runs first on the same ref updates; uninstall puts it back.
With `check` the script runs ``git gasp hook pre-receive --check`` (checks 1, 5 and 7
on the appended log lines): the choice lives in the script itself, so a script copied
to a host's hook directory (GitLab's ``custom_hooks/``) keeps it; installing again
with or without it rewrites the script."""

from __future__ import annotations

import os
from pathlib import Path

from git_gasp.base import git
from git_gasp.base.errors import GaspError
from git_gasp.githooks.install import (
    SERVER_HOOK,
    Outcome,
    _move,
    _read,
    _write_hook,
    hook_version,
    legacy_name,
    render,
    template_version,
)
from git_gasp.guard.push import Settings
from git_gasp.guard.receive_check import KEEP, save_tip_states


def bare_git_dir(path: Path) -> Path:
    """The git dir of the bare repository at `path` (GaspError otherwise)."""
    proc = git.run(path, "rev-parse", "--is-bare-repository", "--absolute-git-dir",
                   check=False)
    lines = proc.stdout.decode("utf-8", "surrogateescape").split("\n")
    if proc.returncode != 0 or len(lines) < 2:
        raise GaspError(f"{path}: not a git repository")
    if lines[0] != "true":
        raise GaspError(f"{path}: not a bare repository; --server installs the pre-receive "
                        "hook of the repository agents push to (`git init --bare`)")
    return Path(lines[1])


CHECK_OPTION = b"--check"


def server_script(check: bool = False) -> bytes:
    """Our pre-receive script (`check`: with checks 1, 5 and 7 on appended lines)."""
    return render(hook=SERVER_HOOK).replace(b"@OPTIONS@", CHECK_OPTION if check else b"")


def installed_check(data: bytes) -> bool:
    """Whether our installed script `data` runs the appended lines' checks."""
    return b"\ngasp_options='--check'\n" in data


def install_server(path: Path, *, check: bool = False) -> Outcome:
    """Write our pre-receive hook into the bare repository at `path` (`check`: one that
    also runs checks 1, 5 and 7 on the log lines a push appends, the protected
    branches' log states saved for it)."""
    git_dir = bare_git_dir(path)
    out = _install_script(git_dir, check)
    if check:
        _prime(git_dir, out)
    return out


def _install_script(git_dir: Path, check: bool) -> Outcome:
    hooks = git_dir / "hooks"
    hook, legacy = hooks / SERVER_HOOK, hooks / legacy_name(SERVER_HOOK)
    out = Outcome()
    existing = _read(hook)
    wanted = server_script(check)
    version = hook_version(existing) if existing is not None else None
    if version is not None:
        if existing == wanted and os.access(hook, os.X_OK):
            out.messages.append(f"{SERVER_HOOK} hook already installed in {hooks}")
            return out
        _write_hook(hook, wanted)
        what = "upgraded" if version != template_version(SERVER_HOOK) else "rewritten"
        if version == template_version(SERVER_HOOK) and installed_check(existing) != check:
            what = ("rewritten to check the appended lines too (checks 1, 5 and 7)" if check
                    else "rewritten without the appended lines' checks (no --check)")
        out.messages.append(f"{SERVER_HOOK} hook {what} in {hooks}")
        return out
    hooks.mkdir(exist_ok=True)
    if existing is not None:
        if legacy.exists() or legacy.is_symlink():
            raise GaspError(f"{hook} is not ours and {legacy} exists too; nothing was changed")
        _move(hook, legacy)
        out.messages.append(f"kept your existing {SERVER_HOOK} hook as {legacy}; it runs "
                            "first")
    try:
        _write_hook(hook, wanted)
    except BaseException:
        if existing is not None:
            _move(legacy, hook)
        raise
    out.messages.append(f"installed the {SERVER_HOOK} hook in {hooks}: pushes that rewrite "
                        "or drop log lines are refused" + (
                            ", and so are appended lines failing checks 1, 5 or 7"
                            if check else ""))
    return out


def _prime(git_dir: Path, out: Outcome) -> None:
    """Save the checks' state of the protected branches' logs (the newest few), so the
    first push onto one feeds only its own lines."""
    proc = git.run(git_dir, "for-each-ref", "--sort=-committerdate",
                   "--format=%(objectname) %(objecttype) %(refname)", "refs/heads/",
                   check=False)
    settings = Settings.read(git_dir)
    tips = []
    for line in proc.stdout.decode("utf-8", "surrogateescape").splitlines():
        sha, kind, ref = (line.split(" ", 2) + ["", ""])[:3]
        if kind == "commit" and settings.protected(ref):
            tips.append(sha)
    saved = save_tip_states(git_dir, tips[:KEEP]) if tips else 0
    if saved:
        out.messages.append(f"saved the checks' state of {saved} branch log"
                            f"{'s' * (saved != 1)}: the next push onto "
                            f"{'them' if saved != 1 else 'it'} reads only its own lines")


def uninstall_server(path: Path) -> Outcome:
    """Remove our pre-receive hook, putting back the one it replaced."""
    git_dir = bare_git_dir(path)
    hook = git_dir / "hooks" / SERVER_HOOK
    legacy = git_dir / "hooks" / legacy_name(SERVER_HOOK)
    out = Outcome()
    existing = _read(hook)
    if existing is None or hook_version(existing) is None:
        out.messages.append(f"no git-gasp {SERVER_HOOK} hook in {hook.parent}")
        return out
    hook.unlink()
    if legacy.exists():
        _move(legacy, hook)
        out.messages.append(f"removed the {SERVER_HOOK} hook; put back {hook}")
    else:
        out.messages.append(f"removed the {SERVER_HOOK} hook from {hook.parent}")
    return out
