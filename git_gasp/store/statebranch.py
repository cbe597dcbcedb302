"""`git gasp init --branch`: the agent's state on its own orphan branch, beside the
project, never on top of it.

In an existing repository, the state branch (default ``gasp/state``) gets the Part I
layout as its first, conformant commit, checked out in a linked worktree git-gasp
manages (``<git common dir>/gasp-state`` unless the user picks a path). The project's
own config records where (`store.location`: ``gasp.state``, ``gasp.stateBranch``), so
every command started in the project finds the state. The working branch gets no
commit and no file: the worktree lives under the git dir (a path the user picks
inside the work tree is added to ``.git/info/exclude``, which is not committed).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from git_gasp.base import git, ignore
from git_gasp.base.errors import GaspError, UsageError
from git_gasp.base.fileops import read_regular_file
from git_gasp.base.files import SMALL_FILE, atomic_write
from git_gasp.protocol.manifest import ManifestError, parse_manifest
from git_gasp.store.attributes import register_driver, restore_config
from git_gasp.store.installs import remember_exclude
from git_gasp.store.layout import default_agent_id, init_agent
from git_gasp.store.location import (
    BRANCH_KEY,
    KEY,
    SECTION,
    configured,
    find_root,
    root_above,
)

DEFAULT_BRANCH = "gasp/state"
DEFAULT_DIR = "gasp-state"  # under the git common dir


class StateBranchError(GaspError):
    """`init --branch` cannot set the state up here; nothing was changed."""


@contextlib.contextmanager
def _taken_back() -> Iterator[list]:
    """A list of undo steps, run in reverse order when the block fails (and re-raised)."""
    undo: list = []
    try:
        yield undo
    except BaseException:
        for step in reversed(undo):
            step()
        raise


def _refuse(why: str) -> StateBranchError:
    return StateBranchError(f"{why}; nothing was changed")


def init_branch(project: Path, branch: str = DEFAULT_BRANCH, worktree: Path | None = None,
                agent_id: str | None = None) -> tuple[str, bytes, Path]:
    """Create the state branch and its worktree for the repository at `project`; return
    (agent id, the state branch's first commit, the worktree's path). Refuses (and
    changes nothing) when the project already has agent state, the branch exists, or
    the worktree path is taken; takes back what it did when a later step fails."""
    top, common, path = _prepare(project, branch, worktree)
    with _taken_back() as undo:
        _add_worktree(top, path, branch, undo)
        agent, commit = init_agent(path, agent_id or _default_id(top))
        _register(top, common, path, branch, undo)
    return agent, commit, path


def reattach_branch(project: Path, branch: str = DEFAULT_BRANCH,
                    worktree: Path | None = None) -> tuple[str, Path] | None:
    """Attach the project again to its own state `branch` (left by `git gasp uninstall`
    without --purge): its worktree (kept, or checked out again) and the config. None
    when the branch does not exist or holds no GASP manifest (then a new state is made
    or a remote's joined); refuses as `init_branch` does otherwise."""
    top = git.work_tree_top(project)
    common = git.common_dir(top)
    shown = git.run(top, "show", f"refs/heads/{branch}:AGENT.md", check=False)
    if shown.returncode != 0 or branch.startswith("-"):
        return None
    try:
        manifest = parse_manifest(shown.stdout)
    except ManifestError:
        return None
    if _has_state(os.path.realpath(project)):
        raise _refuse(f"{project} already has agent state (gasp.state in its git config, "
                      "or a GASP manifest)")
    path = Path(os.path.abspath(worktree)) if worktree is not None else common / DEFAULT_DIR
    with _taken_back() as undo:
        if path.exists():
            here = git.run(path, "symbolic-ref", "-q", "--short", "HEAD", check=False)
            if here.stdout.decode().strip() != branch:
                raise _refuse(f"{path} exists and is not {branch}'s worktree (pick another: "
                              "--worktree PATH)")
        else:
            git.run(top, "worktree", "prune", check=False)
            _check_out(top, path, branch, undo)
        _register(top, common, path, branch, undo)
    return manifest.agent_id, path


def _check_out(top: Path, path: Path, branch: str, undo: list) -> None:
    """The existing `branch` checked out in a new linked worktree at `path` (without the
    project's git hooks), kept out of `git status`; each undo registered before its
    step."""
    undo.append(lambda: _remove_worktree(top, path))
    git.run(top, *git.NO_HOOKS, "worktree", "add", "-q", str(path), branch)
    _exclude(top, path, undo)


def _prepare(project: Path, branch: str, worktree: Path | None) -> tuple[Path, Path, Path]:
    """(work tree top, git common dir, the worktree's path) for `init --branch`, after
    the refusals both a new and a joined state share."""
    top = git.work_tree_top(project)
    common = git.common_dir(top)
    if not git.ok(top, "check-ref-format", "--branch", branch) or branch.startswith("-"):
        raise UsageError(f"{branch!r} is not a valid branch name")
    if _has_state(os.path.realpath(project)):
        raise _refuse(f"{project} already has agent state (a GASP log beside an AGENT.md, "
                      "or gasp.state in its git config)")
    if git.ok(top, "rev-parse", "--verify", "-q", f"refs/heads/{branch}"):
        raise _refuse(f"branch {branch} exists (restore it with git gasp restore, or pick "
                      "another name: --branch NAME)")
    fmt = git.out(top, "rev-parse", "--show-object-format").strip()
    if fmt != "sha1":
        raise _refuse(f"the repository stores {fmt} objects; git-gasp reads sha1 "
                      "repositories only")
    path = Path(os.path.abspath(worktree)) if worktree is not None else common / DEFAULT_DIR
    if path.exists() or path.is_symlink():
        raise _refuse(f"{path} exists (pick another: --worktree PATH)")
    return top, common, path


def _has_state(here: str) -> bool:
    """True when the project at `here` has GASP state: a configured one, or a GASP
    manifest at or above (an AGENT.md that is not one is the project's own agent
    instructions)."""
    return configured(here) is not None or root_above(here) is not None


def _default_id(top: Path) -> str:
    return default_agent_id(top)


def _add_worktree(top: Path, path: Path, branch: str, undo: list) -> None:
    """A linked worktree at `path` on the new orphan `branch`, its index and tree empty.
    The project's git hooks do not run (`base.git.NO_HOOKS`); each undo is registered
    before its step, so a step that fails halfway is taken back too."""
    empty_tree = git.out(top, "hash-object", "-t", "tree", "-w", "--stdin", input=b"").strip()
    seed = git.out(top, "commit-tree", empty_tree, "-m", "gasp: worktree seed",
                   input=b"").strip()  # unreferenced: only `worktree add` needs a commit
    undo.append(lambda: _remove_worktree(top, path))
    git.run(top, *git.NO_HOOKS, "worktree", "add", "-q", "--detach", str(path), seed)
    undo.append(lambda: git.run(top, "update-ref", "-d", f"refs/heads/{branch}", check=False))
    git.run(path, *git.NO_HOOKS, "checkout", "-q", "--orphan", branch)
    _exclude(top, path, undo)


def _remove_worktree(top: Path, path: Path) -> None:
    """Take back a worktree `init --branch` added: its files and git's registration."""
    git.run(top, "worktree", "remove", "--force", str(path), check=False)
    if path.exists() and not path.is_symlink():
        import shutil

        shutil.rmtree(path, ignore_errors=True)
    git.run(top, "worktree", "prune", check=False)


def join_branch(project: Path, remote_ref: str, branch: str = DEFAULT_BRANCH,
                worktree: Path | None = None) -> tuple[str, Path]:
    """Join the agent history `remote_ref` (``REMOTE/BRANCH``, a remote-tracking branch)
    holds: a local `branch` tracking it, checked out in a linked worktree, recorded in
    the project's config as `init_branch` records a new one. Returns (agent id, the
    worktree's path). Refuses (changing nothing) as `init_branch` does, and when the
    remote branch holds no GASP manifest; takes back what it did when a step fails."""
    top, common, path = _prepare(project, branch, worktree)
    try:
        manifest = parse_manifest(git.run(top, "show", f"refs/remotes/{remote_ref}:AGENT.md")
                                  .stdout)
    except (GaspError, ManifestError):
        raise _refuse(f"{remote_ref} holds no GASP manifest (AGENT.md) at its top") from None
    with _taken_back() as undo:
        undo.append(lambda: git.run(top, "branch", "-D", branch, check=False))
        git.run(top, "branch", "-q", "--track", branch, f"refs/remotes/{remote_ref}")
        _check_out(top, path, branch, undo)
        _register(top, common, path, branch, undo)
    return manifest.agent_id, path


def _exclude(top: Path, path: Path, undo: list) -> None:
    """Keep a worktree picked inside the project's work tree out of `git status`
    (``info/exclude``: the project's own, never committed)."""
    try:
        rel = path.resolve().relative_to(top.resolve())
    except ValueError:
        return
    exclude = git.git_path(top, "info/exclude")
    old = read_regular_file(exclude, limit=SMALL_FILE)
    line = ignore.pattern(rel.as_posix(), directory=True) + b"\n"
    sep = b"" if not old or old.endswith(b"\n") else b"\n"
    try:
        atomic_write(exclude, (old or b"") + sep + line, make_parents=True)
    except OSError as exc:
        raise GaspError(f"cannot write {exclude}: {exc.strerror or exc}") from None
    undo.append(lambda: atomic_write(exclude, old) if old is not None
                else exclude.unlink(missing_ok=True))
    remember_exclude(top, line.decode().rstrip("\n"))


def _register(top: Path, common: Path, path: Path, branch: str, undo: list) -> None:
    """Record the state's place in the project's config, and the merge driver in the
    worktree's repository (git config: no file of the project's changes)."""
    try:
        value = os.path.relpath(path, common)
    except ValueError:  # another drive (Windows)
        value = str(path)
    for key, val in ((f"{SECTION}.{KEY}", value), (f"{SECTION}.{BRANCH_KEY}", branch)):
        git.config_set_local(top, key, val)
        undo.append(lambda key=key: git.config_unset_local(top, key))
    before = register_driver(path)
    undo.append(lambda: restore_config(path, before))


def point_here(root: Path) -> str | None:
    """After `init PATH` made the agent in a folder below the current directory's work
    tree top, or in another repository beside it: record it as this repository's
    ``gasp.state``, so every command and the agents' hooks started here find it (the
    same mechanism as `init --branch`, with a path). Returns what to tell the user, or
    None when nothing was needed (the agent is at or above here, or a state is named)."""
    here = os.getcwd()
    if find_root(here) is not None:
        return None
    try:
        top = git.work_tree_top(here)
        common = git.common_dir(top)
    except GaspError:
        return None  # not in a repository: nothing to point from
    try:
        value = os.path.relpath(os.path.abspath(root), common)
    except ValueError:
        value = os.path.abspath(root)
    git.config_set_local(top, f"{SECTION}.{KEY}", value)
    return (f"recorded it as this repository's gasp.state: git gasp commands and the agents' "
            f"hooks run anywhere in {top} use it")
