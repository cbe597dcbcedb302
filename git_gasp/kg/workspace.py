"""Where a graph lives: bare clone, per-branch worktrees, session binding, sync.

Layout (Perstate's): `<home>/<repo-name>.git` is a bare clone of the remote with
`+refs/heads/*:refs/remotes/origin/*` tracking, and `<home>/worktrees/<repo-name>/
<branch>/` is that branch's worktree. Sessions bound to different branches use
different worktrees and so never touch each other's index or files; sessions on
one branch share a worktree and are serialised by a lock file in its git dir.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from git_gasp.base import git
from git_gasp.base.errors import GaspError, UsageError
from git_gasp.base.fileops import UnsafePath, file_lock, move_into_place
from git_gasp.base.files import atomic_write, read_text
from git_gasp.kg import config as cfgmod

REMOTE_PREFIXES = ("git@", "ssh://", "https://", "http://", "git://", "file://")
READ_SYNC_WINDOW = 60  # seconds a read command trusts the last fetch


def is_remote_url(url: str) -> bool:
    return url.startswith(REMOTE_PREFIXES) or (
        ":" in url.split("/")[0] and "@" in url.split(":")[0]
    )


def is_ssh(url: str) -> bool:
    return url.startswith(("git@", "ssh://")) or (
        not url.startswith(REMOTE_PREFIXES) and "@" in url.split(":")[0] and ":" in url
    )


def repo_name(url: str) -> str:
    """`git@host:me/memory.git` -> `memory` (Perstate's `basename URL .git`)."""
    tail = url.rstrip("/").replace(":", "/").rsplit("/", 1)[-1]
    if tail.endswith(".git"):
        tail = tail[:-4]
    if not tail or tail.startswith(".") or tail in ("..",):
        raise UsageError(f"cannot derive a repository name from {url!r}")
    return tail


def check_branch(name: str) -> str:
    if (
        not name
        or name.startswith("-")
        or ".." in name.split("/")
        or not git.ok("/", "check-ref-format", "--branch", name)
    ):
        raise UsageError(f"invalid branch name {name!r}")
    if any(part.startswith(".") for part in name.split("/")):
        raise UsageError(f"invalid branch name {name!r}: hidden path component")
    return name


def normalise_repo(repo: str) -> str:
    """Remote URLs unchanged; local paths made absolute (the clone must find them later)."""
    if is_remote_url(repo):
        return repo
    return str(Path(repo).expanduser().resolve())


@dataclass
class Workspace:
    path: Path          # the worktree (a checkout of `branch`)
    branch: str
    repo: str           # default_repo, or the origin URL for --worktree
    bare: Path | None   # the bare clone, None for --worktree on a plain checkout
    session_id: str | None = None

    @property
    def git_dir(self) -> Path:
        """The worktree's own git dir (where its lock and index cache live)."""
        return git.git_dir(self.path)

    @property
    def entities(self) -> Path:
        return self.path / "entities"


def paths_for(repo: str, branch: str) -> tuple[Path, Path]:
    home = cfgmod.state_home()
    name = repo_name(repo)
    return home / f"{name}.git", home / "worktrees" / name / branch


def _same_repo(a: str, b: str) -> bool:
    if a == b:
        return True
    if not is_remote_url(a) and not is_remote_url(b):
        return Path(a).resolve() == Path(b).resolve()
    return a.rstrip("/").removesuffix(".git") == b.rstrip("/").removesuffix(".git")


def ensure_bare(repo: str) -> Path:
    """The bare clone of `repo` under the state home, cloned on first use."""
    git.have_git()
    home = cfgmod.state_home()
    bare = home / f"{repo_name(repo)}.git"
    if (bare / "HEAD").exists():
        origin = git.out(bare, "config", "--get", "remote.origin.url", check=False)
        if origin and not _same_repo(origin, repo):
            raise GaspError(
                f"{bare} is a clone of {origin}, not {repo}; repositories with the same "
                "name cannot share a state home (set PERSTATE_HOME to another directory)"
            )
        return bare
    home.mkdir(parents=True, exist_ok=True)
    tmp = home / f".{bare.name}.tmp-{os.getpid()}"
    proc = git.run(home, "clone", "--bare", "--quiet", repo, str(tmp), check=False)
    if proc.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        msg = proc.stderr.decode(errors="replace").strip().splitlines()
        raise GaspError(f"cannot clone {repo}: {msg[-1] if msg else 'git clone failed'}")
    git.run(tmp, "config", "remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*")
    git.run(tmp, "config", "core.untrackedCache", "true")
    try:
        move_into_place(tmp, bare, root=home)
    except OSError:  # another process cloned it first
        shutil.rmtree(tmp, ignore_errors=True)
    except UnsafePath:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    git.run(bare, "fetch", "--quiet", "origin", check=False)
    return bare


def fetch_branch(bare: Path, branch: str) -> bool:
    """Update `origin/<branch>`; False when the remote has no such branch."""
    proc = git.run(
        bare, "fetch", "--quiet", "--no-tags", "origin",
        f"+refs/heads/{branch}:refs/remotes/origin/{branch}", check=False,
    )
    if proc.returncode == 0:
        return True
    err = proc.stderr.decode(errors="replace")
    if "couldn't find remote ref" in err or "could not find remote ref" in err.lower():
        return False
    raise GaspError(f"cannot fetch {branch!r} from origin: {err.strip().splitlines()[-1]}")


def has_ref(gitdir: Path, ref: str) -> bool:
    return git.ok(gitdir, "show-ref", "--verify", "--quiet", ref)


def _sync_stamp(repo: str, branch: str) -> Path:
    return cfgmod.state_home() / ".sync" / f"{repo_name(repo)}__{branch.replace('/', '%2F')}.cache"


def _recently_synced(repo: str, branch: str, window: float) -> bool:
    try:
        stamp = float(read_text(_sync_stamp(repo, branch)).strip() or 0)
    except (OSError, ValueError):
        return False
    return 0 <= time.time() - stamp < window


def mark_synced(repo: str, branch: str) -> None:
    stamp = _sync_stamp(repo, branch)
    try:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(stamp, f"{int(time.time())}\n".encode(), durable=False)
    except OSError:
        pass


def ensure_worktree(repo: str, branch: str, *, create_from: str | None = None) -> Workspace:
    """The worktree of `branch`, created (and the branch with it) when missing."""
    bare = ensure_bare(repo)
    _, wt = paths_for(repo, branch)
    if (wt / ".git").is_file():
        return Workspace(wt, branch, repo, bare)
    git.run(bare, "worktree", "prune", check=False)
    if not has_ref(bare, f"refs/heads/{branch}"):
        on_remote = fetch_branch(bare, branch)
        if on_remote:
            git.run(bare, "branch", "--no-track", branch, f"refs/remotes/origin/{branch}")
        elif create_from is not None:
            git.run(bare, "branch", "--no-track", branch, create_from)
        else:
            raise GaspError(
                f"branch {branch!r} does not exist in {repo} "
                "(create it with `git gasp kg fork NAME`)"
            )
    if wt.exists() and any(wt.iterdir()):
        raise GaspError(f"{wt} exists but is not a worktree of {bare}; move it away")
    wt.parent.mkdir(parents=True, exist_ok=True)
    proc = git.run(bare, "worktree", "add", "--quiet", str(wt), branch, check=False)
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip().splitlines()
        raise GaspError(
            f"cannot create the worktree for {branch!r}: {err[-1] if err else 'git failed'}"
        )
    return Workspace(wt, branch, repo, bare)


_HELD: set[str] = set()


@contextlib.contextmanager
def locked(ws: Workspace) -> Iterator[None]:
    """Serialise writers of one worktree (re-entrant within this process)."""
    gd = ws.git_dir
    key = str(gd)
    if key in _HELD:
        yield
        return
    with file_lock(gd / "perstate.lock", f"worktree {ws.path}"):
        _HELD.add(key)
        try:
            yield
        finally:
            _HELD.discard(key)


def pull_ff(ws: Workspace) -> None:
    """Fetch the branch and fast-forward the worktree; warn (not fail) on divergence."""
    if ws.bare is None:
        return
    with locked(ws):
        _pull_ff(ws)


def _pull_ff(ws: Workspace) -> None:
    assert ws.bare is not None
    if not fetch_branch(ws.bare, ws.branch):
        return
    remote = f"refs/remotes/origin/{ws.branch}"
    if git.ok(ws.path, "merge-base", "--is-ancestor", remote, "HEAD"):
        return  # up to date or ahead
    proc = git.run(ws.path, "merge", "--ff-only", "--quiet", remote, check=False)
    if proc.returncode != 0:
        print(
            f"git gasp: warning: {ws.branch} has diverged from origin or the worktree "
            "has local changes; using the local state",
            file=sys.stderr,
        )
    mark_synced(ws.repo, ws.branch)


def from_worktree_path(path: str) -> Workspace:
    p = Path(path).expanduser().resolve()
    if not p.is_dir():
        raise UsageError(f"--worktree {path}: no such directory")
    top = git.run(p, "rev-parse", "--show-toplevel", check=False)
    if top.returncode != 0:
        raise UsageError(f"--worktree {path}: not a git work tree")
    root = Path(top.stdout.decode().strip())
    branch = git.out(root, "symbolic-ref", "--short", "-q", "HEAD", check=False) or "HEAD"
    origin = git.out(root, "config", "--get", "remote.origin.url", check=False)
    return Workspace(root, branch, origin or str(root), None)


def resolve(
    session_id: str | None,
    worktree: str | None,
    *,
    write: bool = False,
    sync: bool | None = None,
) -> Workspace:
    """The workspace a command acts on: `--worktree`, else the session's branch.

    Without a session, read commands use `default_branch`; writes need a session
    (or `--worktree`). `sync` None means: always for writes, within
    READ_SYNC_WINDOW for reads.
    """
    if worktree:
        return from_worktree_path(worktree)
    cfg = cfgmod.load()
    if not cfg.exists or not cfg.default_repo:
        raise GaspError("no knowledge graph configured; run `git gasp kg init --repo URL|PATH`")
    if session_id:
        cfgmod.check_session_id(session_id)
    branch = cfg.branch_of(session_id)
    if branch is None:
        if session_id:
            raise GaspError(
                f"session {session_id} is not bound to a branch; bind it with "
                f"`git gasp kg switch {cfg.default_branch or 'main'} --session-id {session_id}` "
                "(or `kg fork NAME` for a new branch)"
            )
        if write:
            raise UsageError("pass --session-id ID (or --worktree PATH) to write")
        branch = cfg.default_branch or "main"
    ws = ensure_worktree(cfg.default_repo, branch)
    ws.session_id = session_id
    window = float(os.environ.get("PERSTATE_SYNC_WINDOW", READ_SYNC_WINDOW))
    if sync is None:
        sync = write or not _recently_synced(cfg.default_repo, branch, window)
    if sync:
        pull_ff(ws)
    return ws


def touch(ws: Workspace) -> None:
    """Mark the worktree used now (prune ages worktrees by their mtime)."""
    try:
        os.utime(ws.path)
    except OSError:
        pass
