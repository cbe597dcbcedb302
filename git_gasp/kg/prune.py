"""`kg prune Nd`: preview, then (`--execute`) remove what has gone stale.

- session bindings whose branch worktree has not been touched for N days (never
  the current session, never sessions on the default branch);
- worktrees untouched for N days (after `git worktree prune`), except the
  default branch's and those a live session is bound to; a worktree with
  uncommitted or unpushed work is kept and reported, never deleted;
- local branches whose remote branch is gone: deleted only when merged
  (`git branch -d`); unmerged ones are kept and named.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from git_gasp.base import git
from git_gasp.base.errors import GaspError, UsageError
from git_gasp.kg import config as cfgmod
from git_gasp.kg.workspace import paths_for, repo_name


def _age_days(path: Path, now: float) -> float | None:
    try:
        return (now - path.stat().st_mtime) / 86400
    except OSError:
        return None


def _worktrees(bare: Path) -> list[tuple[Path, str]]:
    text = git.out(bare, "worktree", "list", "--porcelain", check=False)
    out, path = [], None
    for line in text.splitlines():
        if line.startswith("worktree "):
            path = Path(line[9:])
        elif line.startswith("branch ") and path is not None:
            out.append((path, line[7:].removeprefix("refs/heads/")))
        elif line.startswith("detached") and path is not None:
            out.append((path, ""))
    return [(p, b) for p, b in out if p.resolve() != bare.resolve()]


def _unsaved(wt: Path, branch: str) -> str | None:
    """Why removing this worktree would lose work, or None."""
    if not wt.exists():
        return None
    if git.out(wt, "status", "--porcelain", check=False):
        return "uncommitted changes"
    ahead = git.out(wt, "rev-list", "--count", "HEAD", "--not", "--remotes=origin",
                    check=False)
    if ahead not in ("", "0"):
        return f"{ahead} commit(s) on no remote branch"
    return None


def run(age: str, *, execute: bool, current_session: str | None) -> list[str]:
    m = re.fullmatch(r"(\d+)d", age)
    if not m:
        raise UsageError(f"age must look like 30d, got {age!r}")
    days = int(m.group(1))
    if days < 1:
        raise UsageError("0d would remove every binding and worktree; the minimum is 1d")
    cfg = cfgmod.load()
    if not cfg.exists:
        return ["config.yml does not exist: nothing to prune"]
    if not cfg.default_repo:
        raise GaspError("default_repo is not set; cannot find worktrees or branches")
    now = time.time()
    bare, _ = paths_for(cfg.default_repo, cfg.default_branch or "main")
    wt_root = cfgmod.state_home() / "worktrees" / repo_name(cfg.default_repo)
    default = cfg.default_branch
    lines = [f"perstate prune: older than {days} day(s)" + ("" if execute else " (preview)")]

    # 1. session bindings
    stale_sessions = []
    for sid, entry in cfg.sessions.items():
        branch = str(entry.get("branch") or "")
        if not branch or sid == current_session or branch == default:
            continue
        age_d = _age_days(wt_root / branch, now)
        if age_d is None or age_d > days:
            stale_sessions.append(sid)
            when = "worktree missing" if age_d is None else f"idle {age_d:.0f} days"
            lines.append(f"  session {sid} (branch {branch}, {when})")
    if not stale_sessions:
        lines.append("  no expired session bindings")
    live = {str(e.get("branch")) for s, e in cfg.sessions.items() if s not in stale_sessions}

    # 2. worktrees
    stale_wts: list[tuple[Path, str]] = []
    kept_wts: set[str] = set()
    if (bare / "HEAD").exists():
        git.run(bare, "fetch", "--quiet", "--prune", "origin", check=False)
        git.run(bare, "worktree", "prune", check=False)
        for wt, branch in _worktrees(bare):
            if branch == default or branch in live:
                continue
            age_d = _age_days(wt, now)
            if age_d is None or age_d <= days:
                continue
            why = _unsaved(wt, branch)
            if why:
                kept_wts.add(branch)
                lines.append(f"  worktree {wt} kept: {why} (idle {age_d:.0f} days)")
            else:
                stale_wts.append((wt, branch))
                lines.append(f"  worktree {wt} (idle {age_d:.0f} days)")
    if not stale_wts:
        lines.append("  no expired worktrees")

    # 3. branches whose remote is gone
    gone: list[str] = []
    if (bare / "HEAD").exists():
        heads = git.out(bare, "for-each-ref", "--format=%(refname:short)", "refs/heads/",
                        check=False).splitlines()
        removing = {b for _, b in stale_wts}
        in_use = {b for _, b in _worktrees(bare)} - removing
        for b in heads:
            if b == default or (b in in_use and b not in kept_wts) or b in live:
                continue
            if not git.ok(bare, "show-ref", "--verify", "--quiet", f"refs/remotes/origin/{b}"):
                if b in kept_wts:
                    lines.append(f"  branch {b}: remote gone, kept (its worktree holds work)")
                    continue
                gone.append(b)
                lines.append(f"  branch {b} (its remote branch is gone)")
    if not gone:
        lines.append("  no branches without a remote")

    if not execute:
        lines.append(f"run `git gasp kg prune {days}d --execute` to remove the items above")
        return lines
    if stale_sessions:
        with cfgmod.editing() as c:
            for sid in stale_sessions:
                c.sessions.pop(sid, None)
        lines.append(f"removed {len(stale_sessions)} session binding(s)")
    for wt, _branch in stale_wts:
        proc = git.run(bare, "worktree", "remove", str(wt), check=False)
        lines.append(f"removed worktree {wt}" if proc.returncode == 0 else
                     f"kept worktree {wt}: {proc.stderr.decode(errors='replace').strip()}")
    for b in gone:
        proc = git.run(bare, "branch", "-d", b, check=False)
        if proc.returncode == 0:
            lines.append(f"deleted branch {b}")
        else:
            lines.append(f"kept branch {b}: it has commits no other branch holds "
                         f"(delete by hand with `git -C {bare} branch -D {b}`)")
    return lines
