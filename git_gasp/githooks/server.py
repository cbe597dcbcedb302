"""`git gasp install-hooks --server`: the pre-receive hook of a bare repository (the
remote agents push to). A pre-receive hook that was there is kept as
``pre-receive.legacy`` and runs first on the same ref updates; uninstall puts it back."""

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


def install_server(path: Path) -> Outcome:
    """Write our pre-receive hook into the bare repository at `path`."""
    git_dir = bare_git_dir(path)
    hooks = git_dir / "hooks"
    hook, legacy = hooks / SERVER_HOOK, hooks / legacy_name(SERVER_HOOK)
    out = Outcome()
    existing = _read(hook)
    wanted = render(hook=SERVER_HOOK)
    version = hook_version(existing) if existing is not None else None
    if version is not None:
        if existing == wanted and os.access(hook, os.X_OK):
            out.messages.append(f"{SERVER_HOOK} hook already installed in {hooks}")
            return out
        _write_hook(hook, wanted)
        what = "upgraded" if version != template_version(SERVER_HOOK) else "rewritten"
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
                        "or drop log lines are refused")
    return out


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
