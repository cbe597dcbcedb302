"""`kg fork` and `kg switch`: move a session to a new or another existing branch."""

from __future__ import annotations

from git_gasp.base import git
from git_gasp.base.errors import GaspError, UsageError
from git_gasp.kg import config as cfgmod
from git_gasp.kg.workspace import (
    check_branch,
    ensure_bare,
    ensure_worktree,
    fetch_branch,
    has_ref,
    locked,
    mark_synced,
    pull_ff,
)


def _cfg() -> cfgmod.Config:
    cfg = cfgmod.load()
    if not cfg.exists or not cfg.default_repo:
        raise GaspError("no knowledge graph configured; run `git gasp kg init --repo URL|PATH`")
    return cfg


def fork(name: str, session_id: str | None) -> list[str]:
    """New branch `name` from the session's branch (its latest remote state), bound to it."""
    check_branch(name)
    if session_id:
        cfgmod.check_session_id(session_id)
    cfg = _cfg()
    current = cfg.branch_of(session_id) or cfg.default_branch or "main"
    bare = ensure_bare(cfg.default_repo)
    if has_ref(bare, f"refs/heads/{name}") or fetch_branch(bare, name):
        raise GaspError(f"branch {name!r} already exists; use `git gasp kg switch {name}`")
    src = ensure_worktree(cfg.default_repo, current)
    with locked(src):
        pull_ff(src)
        start = git.out(src.path, "rev-parse", "HEAD")
    git.run(bare, "branch", "--no-track", name, start)
    try:
        ws = ensure_worktree(cfg.default_repo, name)
        proc = git.run(ws.path, "push", "--quiet", "origin", f"HEAD:refs/heads/{name}",
                       check=False)
    except BaseException:
        git.run(bare, "branch", "-D", name, check=False)
        raise
    lines = [f"forked {name} from {current} at {start[:12]}", f"worktree: {ws.path}"]
    if proc.returncode == 0:
        git.run(ws.path, "update-ref", f"refs/remotes/origin/{name}", "HEAD", check=False)
        mark_synced(cfg.default_repo, name)
        lines.append(f"pushed {name} to origin")
    else:
        err = proc.stderr.decode(errors="replace").strip().splitlines()
        lines.append(f"warning: push failed ({err[-1] if err else 'git push'}); "
                     "the next save pushes it")
    if session_id:
        with cfgmod.editing() as c:
            c.sessions.setdefault(session_id, {})["branch"] = name
        lines.append(f"session {session_id} -> {name}")
    return lines


def switch(branch: str, session_id: str) -> list[str]:
    """Bind `session_id` to the existing `branch` and prepare its worktree."""
    check_branch(branch)
    cfgmod.check_session_id(session_id)
    cfg = _cfg()
    bare = ensure_bare(cfg.default_repo)
    exists = has_ref(bare, f"refs/heads/{branch}") or fetch_branch(bare, branch)
    if not exists:
        raise UsageError(f"branch {branch!r} does not exist; create it with "
                         f"`git gasp kg fork {branch} --session-id {session_id}`")
    ws = ensure_worktree(cfg.default_repo, branch)
    pull_ff(ws)
    before = cfg.branch_of(session_id)
    with cfgmod.editing() as c:
        c.sessions.setdefault(session_id, {})["branch"] = branch
    return [f"switched: {before or 'unbound'} -> {branch}", f"worktree: {ws.path}"]
