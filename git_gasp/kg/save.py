"""`kg save`: apply a planned document of entity/relation changes, commit, push.

The document is `document`'s; what it changes is planned by `plan` (validated
in memory before a byte is written). Files are written through base.files
(tmp + rename); any failure up to a successful push resets the worktree to where
it was, so a save is all or nothing. A push rejected as non-fast-forward is
retried: `git rebase` onto the new remote head, and if that conflicts, the
document is re-applied on top of it (merges compose).
"""

from __future__ import annotations

import contextlib
import os
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from git_gasp.base import git
from git_gasp.base.errors import GaspError
from git_gasp.base.files import atomic_write
from git_gasp.kg import index, model
from git_gasp.kg.document import load_document, today_utc
from git_gasp.kg.plan import Plan, make_plan, summarise
from git_gasp.kg.workspace import Workspace, _pull_ff, fetch_branch, locked, mark_synced

__all__ = ["Result", "apply_plan", "commit", "load_document", "save"]

MAX_PUSH_ATTEMPTS = 10


def apply_plan(plan: Plan) -> None:
    """Write and delete the plan's files (every path checked before any changes)."""
    for rel in plan.writes:
        model.writable(plan.root, rel)  # check every path before changing any
    for rel, text in sorted(plan.writes.items()):
        path = plan.root / rel
        if text is None:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            parent = path.parent
            ent = plan.root / "entities"
            while parent != ent and ent in parent.parents:
                try:
                    parent.rmdir()
                except OSError:
                    break
                parent = parent.parent
        else:
            atomic_write(path, text.encode("utf-8"), root=plan.root, mode=0o600,
                         make_parents=True)


def _identity_args(root: Path) -> list[str]:
    if os.environ.get("GIT_AUTHOR_EMAIL") or git.out(root, "config", "user.email", check=False):
        return []
    return ["-c", "user.name=perstate", "-c", "user.email=perstate@localhost"]


def _spec(paths: list[str]) -> bytes:
    return "\0".join(paths).encode("utf-8") + b"\0"


def _with_paths(root: Path, paths: list[str], *args: str, check: bool = True):
    return git.run(root, *args, "--pathspec-from-file=-", "--pathspec-file-nul",
                   input=_spec(paths), check=check)


def commit(root: Path, paths: list[str], message: str) -> str:
    """Commit exactly `paths` (plumbing: no scan of the whole worktree); the new id.

    `update-ref` with the old value makes it a compare-and-swap on the branch.
    """
    parent = index.head_commit(root)
    _with_paths(root, paths, "add", "-A")
    tree = git.out(root, "write-tree")
    args = ["commit-tree", tree, "-m", message] + (["-p", parent] if parent else [])
    sha = git.out(root, *_identity_args(root), *args)
    git.run(root, "update-ref", "-m", f"commit: {message}", "HEAD", sha, parent or "")
    return sha


def _dirty_paths(root: Path, paths: list[str]) -> list[str]:
    """Which of `paths` differ from HEAD in the worktree (modified, deleted, untracked)."""
    if not paths:
        return []
    proc = _with_paths(root, paths, "add", "--dry-run", "-A", "--ignore-missing")
    out = []
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        verb, _, rest = line.partition(" ")
        if verb in ("add", "remove") and rest.startswith("'") and rest.endswith("'"):
            out.append(rest[1:-1])
    return out


def _restore(root: Path, head: str, paths: list[str]) -> None:
    """Put `paths` (index and files) back as they are at `head`; nothing else is touched."""
    if not paths:
        return
    _with_paths(root, paths, "reset", "-q", head or "HEAD", check=False)
    tracked = set(git.run(root, "ls-tree", "-r", "-z", "--name-only", head, "--",
                          "entities", check=False).stdout.decode("utf-8", "replace")
                  .split("\0")) if head else set()
    back = [p for p in paths if p in tracked]
    if back:
        _with_paths(root, back, "checkout", head, check=False)
    ent = root / "entities"
    for p in paths:
        if p in tracked:
            continue
        path = model.inside(root, p)
        if path is None:
            continue
        with contextlib.suppress(FileNotFoundError, IsADirectoryError):
            path.unlink()
        parent = path.parent
        while parent != ent and ent in parent.parents:
            try:
                parent.rmdir()
            except OSError:
                break
            parent = parent.parent


def _rollback(root: Path, head: str, paths: list[str]) -> None:
    """Undo a save: HEAD back to `head` (keeping others' local edits), our paths restored."""
    gd = git.git_dir(root)
    if (gd / "rebase-merge").exists() or (gd / "rebase-apply").exists():
        git.run(root, "rebase", "--abort", check=False)
    if head and index.head_commit(root) != head:
        if git.run(root, "reset", "-q", "--keep", head, check=False).returncode != 0:
            git.run(root, "update-ref", "HEAD", head, check=False)
    _restore(root, head, paths)


def _check_index_clean(root: Path) -> None:
    if not git.ok(root, "diff", "--cached", "--quiet"):
        raise GaspError(f"the worktree {root} has staged changes; commit or unstage them first")


@dataclass
class Result:
    commit: str = ""
    pushed: bool = False
    attempts: int = 0
    summary: str = ""
    counts: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


def _has_origin(root: Path) -> bool:
    return bool(git.out(root, "config", "--get", "remote.origin.url", check=False))


def _push(ws: Workspace) -> tuple[bool, str]:
    proc = git.run(ws.path, "push", "--quiet", "--porcelain", "origin",
                   f"HEAD:refs/heads/{ws.branch}", check=False)
    text = (proc.stdout + proc.stderr).decode(errors="replace")
    return proc.returncode == 0, text


def _rejected_nonff(text: str) -> bool:
    t = text.lower()
    return any(s in t for s in ("non-fast-forward", "fetch first", "[rejected]", "stale info",
                                "[remote rejected]") ) and "hook declined" not in t


def save(ws: Workspace, doc: dict[str, Any], *, push: bool = True,
         dry_run: bool = False) -> Result:
    """Apply `doc` to the workspace: all of it, committed and pushed, or nothing."""
    today = doc.get("date") or today_utc()
    res = Result()
    with locked(ws):
        if ws.bare is not None and push:
            _pull_ff(ws)
        root = ws.path
        _check_index_clean(root)
        pre_head = index.head_commit(root)
        plan = make_plan(root, doc, today, index.load(root))
        res.counts, res.notes = dict(plan.counts), list(plan.notes)
        res.files = sorted(plan.writes)
        summary = " ".join(str(doc.get("summary") or "").split()) or summarise(plan)
        res.summary = summary
        if not plan.writes or dry_run:
            return res
        dirty = _dirty_paths(root, res.files)
        if dirty:
            raise GaspError(
                f"{len(dirty)} file(s) this save would change have uncommitted edits "
                f"(e.g. {', '.join(dirty[:3])}); commit or discard them first"
            )
        message = f"perstate: {summary}"
        touched = list(res.files)
        try:
            apply_plan(plan)
            commit(root, res.files, message)
            if push and _has_origin(root):
                _push_with_retry(ws, doc, today, message, res, touched)
        except BaseException:
            _rollback(root, pre_head, sorted(set(touched)))
            raise
        res.commit = index.head_commit(root)
        if res.pushed and ws.bare is not None:
            mark_synced(ws.repo, ws.branch)
        return res


def _push_with_retry(ws: Workspace, doc: dict, today: str, message: str, res: Result,
                     touched: list[str]) -> None:
    root = ws.path
    remote_ref = f"refs/remotes/origin/{ws.branch}"
    last = ""
    for attempt in range(1, MAX_PUSH_ATTEMPTS + 1):
        res.attempts = attempt
        ok, last = _push(ws)
        if ok:
            res.pushed = True
            git.run(root, "update-ref", remote_ref, "HEAD", check=False)
            return
        if not _rejected_nonff(last):
            tail = last.strip().splitlines()[-1] if last.strip() else "git push failed"
            raise GaspError(f"push to origin failed, nothing saved: {tail}")
        # someone else pushed first: move our commit onto theirs
        if ws.bare is not None:
            fetch_branch(ws.bare, ws.branch)
        else:
            git.run(root, "fetch", "--quiet", "--no-tags", "origin",
                    f"+refs/heads/{ws.branch}:{remote_ref}", check=False)
        if git.run(root, "rebase", "--quiet", remote_ref, check=False).returncode != 0:
            git.run(root, "rebase", "--abort", check=False)
            # a conflict (both sides edited one file): re-apply the document on their head
            moved = git.run(root, "reset", "-q", "--keep", remote_ref, check=False)
            if moved.returncode != 0:
                raise GaspError("cannot rebase onto the remote: the worktree has local edits "
                                "in the way; nothing saved")
            plan = make_plan(root, doc, today, index.load(root))
            if not plan.writes:
                return
            touched.extend(plan.writes)
            dirty = _dirty_paths(root, sorted(plan.writes))
            if dirty:
                raise GaspError(f"uncommitted edits in {', '.join(dirty[:3])}; nothing saved")
            apply_plan(plan)
            commit(root, sorted(plan.writes), message)
            res.notes.append("re-applied on top of a concurrent change to the same files")
        time.sleep(random.uniform(0.05, 0.2) * attempt)
    raise GaspError(
        f"push still rejected after {MAX_PUSH_ATTEMPTS} attempts, nothing saved: "
        f"{last.strip().splitlines()[-1] if last.strip() else 'rejected'}"
    )


def warn(msg: str) -> None:
    print(f"git gasp: warning: {msg}", file=sys.stderr)
