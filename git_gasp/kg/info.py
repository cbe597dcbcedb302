"""`kg info` and `kg status`: what is configured, and what the graph holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from git_gasp.base import git
from git_gasp.kg import config as cfgmod
from git_gasp.kg import index
from git_gasp.kg.workspace import Workspace, paths_for


def human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def status(session_id: str | None) -> dict[str, Any]:
    """Config completeness and session binding; reads files only, changes nothing."""
    cfg = cfgmod.load()
    st: dict[str, Any] = {
        "state_home": str(cfgmod.state_home()),
        "config": str(cfgmod.config_path()),
        "configured": bool(cfg.exists and cfg.default_repo and cfg.default_branch),
        "default_repo": cfg.default_repo or None,
        "default_branch": cfg.default_branch or None,
        "session_id": session_id,
        "bound_branch": cfg.branch_of(session_id),
        "sessions": len(cfg.sessions),
    }
    if cfg.default_repo:
        branch = st["bound_branch"] or cfg.default_branch or "main"
        try:
            bare, wt = paths_for(cfg.default_repo, branch)
            st["bare_clone"] = str(bare) if (bare / "HEAD").exists() else None
            st["worktree"] = str(wt) if (wt / ".git").exists() else None
        except Exception:  # noqa: BLE001 - status never fails on a bad repo name
            st["bare_clone"] = st["worktree"] = None
    missing = [k for k in ("default_repo", "default_branch") if not st[k]]
    if not cfg.exists:
        st["next"] = "git gasp kg init --repo URL|PATH [--branch B] --yes"
    elif missing:
        st["next"] = f"set {', '.join(missing)}: git gasp kg init --repo URL|PATH --yes"
    elif session_id and not st["bound_branch"]:
        st["next"] = (f"git gasp kg switch {cfg.default_branch} --session-id {session_id}  "
                      "(or: kg fork NAME)")
    else:
        st["next"] = None
    return st


def info(ws: Workspace, *, commits: int = 5, uncommitted: bool = False,
         progress=None) -> dict[str, Any]:
    """Repo, branch, path, size, counts and recent commits of the graph (`progress`: told
    how a full index build goes)."""
    g = index.load(ws.path, uncommitted=uncommitted, progress=progress)
    extra = 0
    for p in Path(ws.path).iterdir():
        if p.is_file() and p.name != ".git":
            extra += p.stat().st_size
    schema = ws.path / "schema"
    if schema.is_dir():
        extra += sum(f.stat().st_size for f in schema.rglob("*") if f.is_file())
    log = git.run(ws.path, "log", "--oneline", f"-{commits}", check=False).stdout.decode(
        errors="replace").strip()
    return {
        "repo": git.out(ws.path, "config", "--get", "remote.origin.url", check=False)
        or ws.repo,
        "branch": ws.branch,
        "path": str(ws.path),
        "size_bytes": g.size + extra,
        "size": human(g.size + extra),
        "entities": g.n_entities,
        "relations": {
            "total": g.n_relations,
            "valid": g.valid,
            "superseded": g.superseded,
            "undeclared": g.undeclared,
        },
        "recent_commits": log.splitlines() if log else [],
    }
