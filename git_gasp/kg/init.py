"""`kg init`: config, bare clone, worktree, initial structure, commit, push."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from git_gasp.base import git
from git_gasp.base.errors import GaspError
from git_gasp.base.files import atomic_write
from git_gasp.kg import config as cfgmod
from git_gasp.kg.save import commit
from git_gasp.kg.workspace import (
    Workspace,
    check_branch,
    ensure_bare,
    ensure_worktree,
    fetch_branch,
    has_ref,
    is_remote_url,
    is_ssh,
    mark_synced,
    normalise_repo,
)

ONTOLOGY = """# Ontology

## Entity Types

| Type | Description |
|------|-------------|
| domain | A field or area of knowledge |
| concept | An idea or abstraction |
| technology | A tool, library or technique |
| framework | A structured approach or system |
| person | A person |
| insight | A crystallised insight |

## Relation Types

| Type | Description | Inverse |
|------|-------------|---------|
| depends-on | A depends on B | enables |
| enables | A enables B | depends-on |
| evolves-from | A evolved from B | evolves-to |
| contradicts | A contradicts B | contradicts |
| specializes | A is a specialisation of B | generalizes |
| part-of | A is part of B | contains |
| applies-to | A applies to B | applied-by |

## Properties

Schema is open — any YAML frontmatter field is valid.
"""

README = """# Perstate Knowledge Graph

This repo is a file-system knowledge graph maintained by perstate (`git gasp kg`).

## Branch Isolation Design

Each branch in this repo corresponds to one agent's or person's persistent state:

- `main` — personal personality & knowledge (default branch)
- Other branches — individual agents' states

## Structure

- `entities/<id>/entity.md` — entity metadata + content
- `entities/<id>/<relation-type>/<target>.md` — relations
- `schema/ontology.md` — schema documentation

## Query

- `ls entities/` — list all entities
- `ls entities/<id>/` — list out-relation types
- `grep -rl "keyword" entities/` — full-text search
- `git gasp kg search "keyword"` — ranked search, `--hop N`, `--reverse ID`
"""


def warn(msg: str) -> None:
    print(f"git gasp: warning: {msg}", file=sys.stderr)


def _init_local(path: Path, branch: str) -> None:
    """Make a local path usable as a remote (Perstate: auto `git init` when not a repo)."""
    if not ((path / ".git").exists() or (path / "HEAD").is_file()):
        path.mkdir(parents=True, exist_ok=True)
        git.run(path, "init", "--quiet", "-b", branch)
        atomic_write(path / "README.md", b"# Perstate Knowledge Graph\n", root=path)
        git.run(path, "add", "README.md")
        git.run(path, *_identity(path), "commit", "--quiet", "-m", "init")
    if (path / ".git").exists():
        # a non-bare repo refuses pushes to its checked-out branch unless told otherwise
        git.run(path, "config", "receive.denyCurrentBranch", "updateInstead", check=False)


def _create_branch(bare: Path, branch: str) -> str | None:
    """Start point for a branch the remote lacks: origin's HEAD branch, else None (empty)."""
    head = git.out(bare, "symbolic-ref", "-q", "HEAD", check=False)
    for ref in (head.replace("refs/heads/", "refs/remotes/origin/", 1) if head else "", head,
                "refs/remotes/origin/main", "refs/remotes/origin/master"):
        if ref and has_ref(bare, ref):
            return ref
    return None


def _identity(cwd: Path) -> list[str]:
    """`-c user.*` fallbacks when git has no identity configured (it would refuse to commit)."""
    if os.environ.get("GIT_AUTHOR_EMAIL") or git.out(cwd, "config", "user.email", check=False):
        return []
    return ["-c", "user.name=perstate", "-c", "user.email=perstate@localhost"]


def _root_commit(bare: Path, branch: str) -> None:
    empty = git.run(bare, "mktree", input=b"").stdout.decode().strip()
    sha = git.out(bare, *_identity(bare), "commit-tree", empty, "-m",
                  "perstate: initialize knowledge graph")
    git.run(bare, "update-ref", f"refs/heads/{branch}", sha)


def run_init(repo: str, branch: str, session_id: str | None) -> tuple[Workspace, list[str]]:
    git.have_git()
    check_branch(branch)
    if session_id:
        cfgmod.check_session_id(session_id)
    notes: list[str] = []
    fresh = False  # True: the branch starts at an empty commit we just made (amend it)
    if not is_ssh(repo):
        warn(f"{repo} is not an SSH remote; the graph holds private knowledge, "
             "an SSH URL (git@host:user/repo.git) is strongly recommended")
    repo = normalise_repo(repo)
    if not is_remote_url(repo):
        _init_local(Path(repo), branch)
    with cfgmod.editing() as cfg:
        if cfg.default_repo and cfg.default_repo != repo:
            notes.append(f"default_repo changed from {cfg.default_repo} to {repo}")
        cfg.default_repo = repo
        cfg.default_branch = branch
        if session_id:
            cfg.sessions.setdefault(session_id, {})["branch"] = branch
    bare = ensure_bare(repo)
    on_remote = fetch_branch(bare, branch)
    if not has_ref(bare, f"refs/heads/{branch}"):
        if on_remote:
            git.run(bare, "branch", "--no-track", branch, f"refs/remotes/origin/{branch}")
        else:
            start = _create_branch(bare, branch)
            if start:
                git.run(bare, "branch", "--no-track", branch, start)
            else:
                _root_commit(bare, branch)
                fresh = True
    ws = ensure_worktree(repo, branch)
    if on_remote:
        git.run(ws.path, "merge", "--ff-only", "--quiet", f"refs/remotes/origin/{branch}",
                check=False)
    (ws.path / "entities").mkdir(exist_ok=True)
    created = []
    for rel, text in (("schema/ontology.md", ONTOLOGY), ("README.md", README)):
        p = ws.path / rel
        if not p.exists():
            p.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(p, text.encode("utf-8"), root=ws.path)
            created.append(rel)
    if created:
        if fresh:
            git.run(ws.path, "add", "--", *created)
            git.run(ws.path, *_identity(ws.path), "commit", "--quiet", "--amend",
                    "--no-edit", "--no-verify")
        else:
            commit(ws.path, created, "perstate: initialize knowledge graph")
        notes.append(f"created {', '.join(created)}")
    ahead = not on_remote or not git.ok(
        ws.path, "merge-base", "--is-ancestor", "HEAD", f"refs/remotes/origin/{branch}")
    if ahead:
        proc = git.run(ws.path, "push", "--quiet", "origin", f"HEAD:refs/heads/{branch}",
                       check=False)
        if proc.returncode != 0:
            err = proc.stderr.decode(errors="replace").strip().splitlines()
            raise GaspError(f"initialised locally but the push failed: "
                            f"{err[-1] if err else 'git push failed'}")
        git.run(ws.path, "update-ref", f"refs/remotes/origin/{branch}", "HEAD", check=False)
        notes.append("pushed")
    mark_synced(repo, branch)
    return ws, notes
