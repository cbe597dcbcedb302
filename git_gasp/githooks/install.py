"""`git gasp install-hooks`: the guard hooks, the merge driver, `.gitattributes`.

Two hooks run the guard: ``pre-commit`` for every commit, and ``pre-merge-commit``
for the commit of a merge that went through without a conflict (git runs no
pre-commit hook for that one). The hook directory is whatever ``git rev-parse
--git-path hooks`` says (it honours ``core.hooksPath`` and linked worktrees). A hook
that is not ours is never lost: it moves to ``<hook>.legacy``, our hook runs it
first, and uninstall puts it back. When a hook manager owns the hooks we print the
lines to add and write no hook.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import git_gasp
from git_gasp.base.errors import GaspError
from git_gasp.base.fileops import move_into_place
from git_gasp.base.files import SMALL_FILE, atomic_write, read_file, refuse_links
from git_gasp.base.git import config_get, git_path, is_tracked, work_tree_top
from git_gasp.githooks import managers
from git_gasp.githooks.templates import read_template
from git_gasp.store import attributes
from git_gasp.store.location import is_state_branch

HOOK = "pre-commit"
MERGE_HOOK = "pre-merge-commit"
HOOKS = (HOOK, MERGE_HOOK)
SERVER_HOOK = "pre-receive"
MARKER = re.compile(rb"^# git-gasp (?:pre-commit|pre-merge-commit|pre-receive) hook", re.M)
VERSION_TAG = b"# git-gasp-hook-version: "


def legacy_name(hook: str) -> str:
    return hook + ".legacy"


def template(hook: str = HOOK) -> bytes:
    """The hook template shipped in the package (one for both client hooks, one for the
    server's pre-receive)."""
    return read_template(SERVER_HOOK if hook == SERVER_HOOK else HOOK)


def template_version(hook: str = HOOK) -> str:
    """The version marker: a hash of the template, so any change to it is an upgrade."""
    return hashlib.sha256(template(hook)).hexdigest()[:16]


def _run_words() -> str:
    # -P (3.11+) keeps the work tree, the hook's cwd, off sys.path: a repo's own
    # `git_gasp/` or `click.py` must not shadow the installed package.
    if sys.version_info >= (3, 11):
        return "-P -m git_gasp.cli.main"
    code = "import sys; del sys.path[0]; from git_gasp.cli.main import main; main()"
    return "-c " + shlex.quote(code)


def render(python: str | None = None, hook: str = HOOK) -> bytes:
    """The `hook` script for this interpreter and this installation of git_gasp."""
    text = template(hook).decode()
    values = {
        "@HOOK@": hook,
        "@VERSION@": template_version(hook),
        "@PYTHON@": shlex.quote(python or sys.executable),
        "@PACKAGE@": shlex.quote(os.path.abspath(git_gasp.__file__)),
        "@RUN@": _run_words(),
    }
    for key, value in values.items():
        text = text.replace(key, value)
    return text.encode()


def hook_version(data: bytes) -> str | None:
    """Our version marker in a hook's bytes; None when the hook is not ours."""
    if MARKER.search(data) is None:
        return None
    for line in data.splitlines():
        if line.startswith(VERSION_TAG):
            return line[len(VERSION_TAG):].strip().decode(errors="replace")
    return ""


@dataclass
class Outcome:
    """What an install or uninstall did, for the user and for a rollback."""

    messages: list[str] = field(default_factory=list)
    manager: managers.Manager | None = None
    undo: list[Callable[[], None]] = field(default_factory=list)

    def rollback(self) -> None:
        for step in reversed(self.undo):
            try:
                step()
            except (OSError, GaspError):
                pass
        self.undo.clear()


def _read(path: Path) -> bytes | None:
    try:
        return read_file(path, limit=SMALL_FILE)
    except FileNotFoundError:
        return None if not path.is_symlink() else b""
    except IsADirectoryError:
        raise GaspError(f"{path} is a directory, not a hook") from None
    except OSError as exc:
        raise GaspError(f"cannot read {path}: {exc}") from None


def _write_hook(path: Path, data: bytes) -> None:
    """Replace the hook `path` with `data`, executable (0o755 whatever the umask)."""
    _write_atomic(path, data, 0o755)
    try:
        os.chmod(path, 0o755)  # an existing hook keeps its mode through the replace
    except OSError as exc:
        raise GaspError(f"cannot make {path} executable: {exc}") from None


def _write_atomic(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write `path` whole or not at all (a temporary file beside it, then a rename).
    `mode`: for a new file (default: the umask's); an existing file keeps its own."""
    try:
        atomic_write(path, data, mode=mode)
    except OSError as exc:
        raise GaspError(f"cannot write {path}: {exc}") from None


def _move(src: Path, dest: Path) -> None:
    """Rename the hook `src` to `dest` (a legacy hook aside, or back)."""
    try:
        move_into_place(src, dest)
    except OSError as exc:
        raise GaspError(f"cannot move {src} to {dest}: {exc}") from None


def _restore(path: Path, data: bytes | None, mode: int | None) -> Callable[[], None]:
    def undo() -> None:
        if data is None:
            path.unlink(missing_ok=True)
        else:
            _write_hook(path, data)
            if mode is not None:
                os.chmod(path, mode)
    return undo


def _refuse_linked_hooks_dir(top: Path, hooks_dir: Path) -> None:
    """A hooks dir inside the work tree (core.hooksPath naming a committed directory) is
    written only when no directory on the way is a link: a cloned repo's links are never
    followed. (A hook that is itself a link is moved aside as legacy, never written.)"""
    inside = Path(os.path.abspath(hooks_dir))
    for base in (Path(os.path.abspath(top)), Path(os.path.realpath(top))):
        try:
            inside.relative_to(base)
        except ValueError:
            continue
        refuse_links(inside, base)
        return


def install_hook(top: Path, hooks_dir: Path, *, force: bool, out: Outcome,
                 name: str = HOOK) -> None:
    """Write our `name` hook into `hooks_dir`, keeping any foreign hook as legacy."""
    hook, legacy = hooks_dir / name, hooks_dir / legacy_name(name)
    _refuse_linked_hooks_dir(top, hooks_dir)
    existing = _read(hook)
    wanted = render(hook=name)
    version = hook_version(existing) if existing is not None else None
    if version is None:  # no hook, or a foreign one
        if out.manager is not None and not force:
            return  # already told how to add both hooks to the manager
        manager = managers.detect(top, hooks_dir, config_get(top, "core.hooksPath"), existing)
        if manager is None and existing is not None and is_tracked(top, str(hook)):
            manager = managers.Manager(
                "this repository", os.path.relpath(hook, top),
                f"  {managers.guard_command(name)}", False, False)
        if manager is not None and not force and is_state_branch(top):
            out.manager = manager  # the project's hooks: no guard goes into its config
            out.messages.append(f"{manager.name} manages the project's hooks, which git-gasp "
                                "leaves alone: its own commits on the state branch apply the "
                                "guard (--force installs ours, chaining theirs)")
            return
        if manager is not None and not force:
            out.manager = manager
            out.messages.append(manager.message()
                                + "\n(or run `git gasp install-hooks --force` to install our "
                                f"hooks anyway, chaining the current ones as {name}.legacy)")
            return
    if version is not None:
        mode = os.stat(hook).st_mode
        if existing == wanted and mode & 0o111 == 0o111:
            out.messages.append(f"{name} hook already installed in {hooks_dir}")
            return
        _write_hook(hook, wanted)
        out.undo.append(_restore(hook, existing, stat.S_IMODE(mode)))
        what = "upgraded" if version != template_version() else "rewritten"
        out.messages.append(f"{name} hook {what} in {hooks_dir}")
        return
    if not hooks_dir.is_dir():
        try:
            hooks_dir.mkdir(parents=True)
        except OSError as exc:
            raise GaspError(f"cannot create the hooks directory {hooks_dir}: {exc}") from None
    if existing is not None:
        if legacy.exists() or legacy.is_symlink():
            raise GaspError(f"{hook} is not ours and {legacy} exists too; nothing was changed "
                            f"(move one of them away, then run install-hooks again)")
        _move(hook, legacy)
        out.undo.append(lambda: _move(legacy, hook))
        if not os.access(legacy, os.X_OK):
            out.messages.append(f"note: your existing hook {legacy} is not executable, so git "
                                "was not running it, and neither will ours")
        out.messages.append(f"kept your existing {name} hook as {legacy}; it runs first")
    _write_hook(hook, wanted)
    out.undo.append(_restore(hook, None, None))
    out.messages.append(f"installed the {name} hook in {hooks_dir}")


def install(root: Path, *, force: bool = False, gitattributes: bool = True) -> Outcome:
    """Install the hook, register the merge driver and add the `.gitattributes` lines."""
    root = Path(root)
    top = work_tree_top(root)
    out = Outcome()
    try:
        hooks_dir = git_path(root, "hooks")
        for name in HOOKS:
            install_hook(top, hooks_dir, force=force, out=out, name=name)
        before = attributes.register_driver(root)
        if any(value != now for (_, value), now in zip(
                before, (attributes.DRIVER_NAME, attributes.driver_command()), strict=True)):
            out.undo.append(lambda: attributes.restore_config(root, before))
            out.messages.append("registered the merge driver (merge.gasp.driver) in this "
                                "clone's git config")
        if gitattributes:
            _update_gitattributes(root, out)
    except BaseException:
        out.rollback()
        raise
    return out


def _update_gitattributes(root: Path, out: Outcome) -> None:
    path = root / ".gitattributes"
    # A symlinked .gitattributes (or a link on the way to it: a cloned repo's committed
    # link to ~/.bashrc, say) is refused, never written through; a file keeps its mode.
    target = refuse_links(path, work_tree_top(root))
    old = _read(path)
    new = attributes.updated_gitattributes(old, attributes.attribute_lines(root))
    if new is None:
        return
    _write_atomic(target, new)
    out.undo.append(lambda: _write_atomic(target, old) if old is not None
                    else target.unlink(missing_ok=True))
    out.messages.append(f"added merge=gasp lines to {path}; commit it so every clone merges "
                        "the append-only files with the driver")


def uninstall(root: Path) -> Outcome:
    """Remove our hook (restoring the one it replaced) and the driver registration."""
    root = Path(root)
    work_tree_top(root)
    hooks_dir = git_path(root, "hooks")
    out = Outcome()
    for name in HOOKS:
        _uninstall_hook(hooks_dir, name, out)
    if attributes.unregister_driver(root):
        out.messages.append("removed merge.gasp from this clone's git config")
    using = attributes.uses_gasp_merge(root)
    if using:
        out.messages.append("note: .gitattributes still says merge=gasp; git now merges those "
                            "files as text. Remove the lines (and commit) to stop for everyone.")
    return out


def _uninstall_hook(hooks_dir: Path, name: str, out: Outcome) -> None:
    hook, legacy = hooks_dir / name, hooks_dir / legacy_name(name)
    existing = _read(hook)
    if existing is not None and hook_version(existing) is not None:
        hook.unlink()
        if legacy.exists() or legacy.is_symlink():
            _move(legacy, hook)
            out.messages.append(f"removed the GASP {name} hook; restored {hook} from "
                                f"{legacy.name}")
        else:
            out.messages.append(f"removed the GASP {name} hook from {hooks_dir}")
    elif existing is not None:
        out.messages.append(f"{hook} is not the GASP hook; left alone")
    else:
        out.messages.append(f"no {name} hook in {hooks_dir}")


def install_for_init(root: Path) -> Callable[[], None]:
    """Install hooks + driver for `git gasp init`; return the function that undoes it.

    A hook manager's instructions go to stderr (the user has a line to add).
    """
    try:
        outcome = install(root, gitattributes=False)
    except GaspError as exc:
        raise GaspError(f"cannot install the hooks: {exc}; nothing was changed") from None
    if outcome.manager is not None:
        sys.stderr.write(outcome.manager.message() + "\n")
    return outcome.rollback
