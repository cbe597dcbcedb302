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

import os
from pathlib import Path

from git_gasp.base import git, ignore
from git_gasp.base.errors import GaspError, UsageError
from git_gasp.store.location import BRANCH_KEY, KEY, SECTION, find_root

DEFAULT_BRANCH = "gasp/state"
DEFAULT_DIR = "gasp-state"  # under the git common dir


class StateBranchError(GaspError):
    """`init --branch` cannot set the state up here; nothing was changed."""


def _refuse(why: str) -> StateBranchError:
    return StateBranchError(f"{why}; nothing was changed")


def init_branch(project: Path, branch: str = DEFAULT_BRANCH, worktree: Path | None = None,
                agent_id: str | None = None) -> tuple[str, bytes, Path]:
    """Create the state branch and its worktree for the repository at `project`; return
    (agent id, the state branch's first commit, the worktree's path). Refuses (and
    changes nothing) when the project already has agent state, the branch exists, or
    the worktree path is taken; takes back what it did when a later step fails."""
    from git_gasp.store.layout import init_agent

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
    undo: list = []
    try:
        _add_worktree(top, path, branch, undo)
        agent, commit = init_agent(path, agent_id or _default_id(top))
        _register(top, common, path, branch, undo)
    except BaseException:
        for step in reversed(undo):
            step()
        raise
    return agent, commit, path


def _has_state(here: str) -> bool:
    """True when the project at `here` has GASP state: a configured one, or an AGENT.md
    at or above with its log beside it (an AGENT.md alone may be the project's own
    agent instructions)."""
    from git_gasp.store.location import configured_root, root_above

    return root_above(here, with_log=True) is not None or configured_root(here) is not None


def _default_id(top: Path) -> str:
    from git_gasp.store.layout import default_agent_id

    return default_agent_id(top)


def _add_worktree(top: Path, path: Path, branch: str, undo: list) -> None:
    """A linked worktree at `path` on the new orphan `branch`, its index and tree empty."""
    empty_tree = git.out(top, "hash-object", "-t", "tree", "-w", "--stdin", input=b"").strip()
    seed = git.out(top, "commit-tree", empty_tree, "-m", "gasp: worktree seed",
                   input=b"").strip()  # unreferenced: only `worktree add` needs a commit
    git.run(top, "worktree", "add", "-q", "--detach", str(path), seed)
    undo.append(lambda: git.run(top, "worktree", "remove", "--force", str(path), check=False))
    git.run(path, "checkout", "-q", "--orphan", branch)
    undo.append(lambda: git.run(top, "update-ref", "-d", f"refs/heads/{branch}", check=False))
    _exclude(top, path, undo)


def _exclude(top: Path, path: Path, undo: list) -> None:
    """Keep a worktree picked inside the project's work tree out of `git status`
    (``info/exclude``: the project's own, never committed)."""
    try:
        rel = path.resolve().relative_to(top.resolve())
    except ValueError:
        return
    from git_gasp.base.files import SMALL_FILE, atomic_write, read_regular_file

    exclude = git.git_path(top, "info/exclude")
    old = read_regular_file(exclude, limit=SMALL_FILE)
    line = ignore.pattern(rel.as_posix(), directory=True) + b"\n"
    sep = b"" if not old or old.endswith(b"\n") else b"\n"
    atomic_write(exclude, (old or b"") + sep + line, make_parents=True)
    undo.append(lambda: atomic_write(exclude, old) if old is not None
                else exclude.unlink(missing_ok=True))


def _register(top: Path, common: Path, path: Path, branch: str, undo: list) -> None:
    """Record the state's place in the project's config, and the merge driver in the
    worktree's repository (git config: no file of the project's changes)."""
    from git_gasp.store.attributes import register_driver, restore_config

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
