"""What `git gasp sync` leaves under ``<gitdir>/gasp/`` and what it checks before it
starts: its lock, the record of the merge or rebase it started, the clean-up of one
a killed sync left behind, and the refusals (dirty tree, detached HEAD, ...).

- ``sync.lock``: an exclusive ``flock`` held for the whole sync and inherited by every
  git process it starts that changes something (`Session.git`), so after a SIGKILL of
  the sync the next one waits until those git processes are done.
- ``sync.json``: written before a merge, rebase or fast-forward starts
  (``{"op", "branch", "orig", "onto", "pid", "started_ms"}``), removed when the branch
  is where the sync wants it. Found on start, it names the operation a killed sync
  left: only a merge or rebase that it started (same ``onto`` and original head) is
  aborted; a finished one is kept (the next steps validate and push it). When the
  sync was killed together with its git processes, the lock files and merge-driver
  temporaries they left (made after it started, open in no process) are removed.
- ``sync.out``: git's messages of the last git process that changed something
  (written to a file, never a pipe, so such a git outlives a killed sync unharmed).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from git_gasp.base import git
from git_gasp.base.errors import GaspError
from git_gasp.base.fileops import held_lock, open_output
from git_gasp.base.files import SMALL_FILE, atomic_write, read_file, read_text
from git_gasp.store.location import is_state_branch

LOCK_WAIT_S = 60.0
RECORD = "sync.json"
IN_PROGRESS = (  # git dir entry -> what it means, how to get out of it
    ("MERGE_HEAD", "a merge is in progress", "finish it (git commit) or git merge --abort"),
    ("rebase-merge", "a rebase is in progress", "finish it or git rebase --abort"),
    ("rebase-apply", "a rebase or git am is in progress",
     "finish it or git rebase --abort / git am --abort"),
    ("CHERRY_PICK_HEAD", "a cherry-pick is in progress", "finish it or git cherry-pick --abort"),
    ("REVERT_HEAD", "a revert is in progress", "finish it or git revert --abort"),
    ("BISECT_LOG", "a bisect is in progress", "git bisect reset"),
)


class CannotStart(GaspError):
    """The clone is not in a state to sync (nothing was changed)."""

    exit_code = 5


@dataclass
class Session:
    """One sync's hold on a clone: its work tree top, git dir, lock and git options."""

    top: Path
    gdir: Path
    lock_fd: int
    config: list[str] = field(default_factory=list)  # ["-c", "k=v", ...] for every merge
    made: str | None = None  # the commit this attempt's merge or rebase put the branch at

    @property
    def state_dir(self) -> Path:
        return self.gdir / "gasp"

    def git(self, *args: str, timeout: float | None = None) -> tuple[int, str]:
        """Run a git that changes something: output to ``sync.out`` (no pipe), the lock
        inherited. (exit status, git's messages)."""
        out = self.state_dir / "sync.out"
        with open_output(out) as fh:
            proc = git.run(self.top, *self.config, *args, check=False, output=fh,
                           pass_fds=(self.lock_fd,), timeout=timeout)
        try:
            text = read_file(out).decode("utf-8", "replace")
        except OSError:
            text = ""
        return proc.returncode, text

    # --- the record of what this sync started
    def record(self, op: str, branch: str, orig: str, onto: str | None) -> None:
        data = {"op": op, "branch": branch, "orig": orig, "onto": onto, "pid": os.getpid(),
                "started_ms": int(time.time() * 1000)}
        atomic_write(self.state_dir / RECORD, json.dumps(data).encode() + b"\n",
                     root=self.gdir, durable=True)

    def recorded(self) -> dict | None:
        try:
            data = json.loads(read_file(self.state_dir / RECORD, limit=SMALL_FILE))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def forget(self) -> None:
        (self.state_dir / RECORD).unlink(missing_ok=True)


@contextlib.contextmanager
def session(start: Path, wait_s: float = LOCK_WAIT_S) -> Iterator[Session]:
    """Hold ``sync.lock`` of the clone around `start` (CannotStart after `wait_s`)."""
    top = git.work_tree_top(start)
    gdir = git.git_dir(top)
    state = gdir / "gasp"
    state.mkdir(parents=True, exist_ok=True)
    with held_lock(state / "sync.lock", wait_s, poll_s=0.05) as fd:
        if fd is None:
            raise CannotStart(f"another git gasp sync is running in this clone "
                              f"(it holds {state / 'sync.lock'}); wait for it")
        yield Session(top, gdir, fd)


CONFLICT_RECORD = "sync-conflict.json"


def remember_conflict(s: Session, op: str, orig: str, onto: str) -> None:
    """Note that this sync left a conflicted `op` (merge or rebase) in progress on
    purpose, so ``sync --abort`` may abort it and the next sync names it."""
    data = {"op": op, "orig": orig, "onto": onto, "pid": os.getpid(),
            "started_ms": int(time.time() * 1000)}
    atomic_write(s.state_dir / CONFLICT_RECORD, json.dumps(data).encode() + b"\n",
                 root=s.gdir)


def left_conflict(s: Session) -> dict | None:
    """What `remember_conflict` noted, or None."""
    try:
        data = json.loads(read_file(s.state_dir / CONFLICT_RECORD, limit=SMALL_FILE))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def forget_conflict(s: Session) -> None:
    (s.state_dir / CONFLICT_RECORD).unlink(missing_ok=True)


def _rev(top: Path, rev: str) -> str | None:
    return git.resolve_commit(top, rev)


def _parents(top: Path, sha: str) -> list[str]:
    proc = git.run(top, "rev-list", "--parents", "-n1", sha, check=False)
    return proc.stdout.decode().split()[1:] if proc.returncode == 0 else []


def _read(path: Path) -> str:
    try:
        return read_text(path, errors="replace").strip()
    except OSError:
        return ""


def clean_up(s: Session) -> list[str]:
    """Undo what a killed sync left half done; return what was done (for the report).

    A merge in progress is aborted when MERGE_HEAD is the commit that sync merged and
    HEAD its original head; a rebase when its ``onto`` and ``orig-head`` are that
    sync's. Anything else is left to the user (the refusals say what it is)."""
    rec = s.recorded()
    if rec is None:
        return []
    done: list[str] = []
    op, orig, onto = rec.get("op"), rec.get("orig"), rec.get("onto")
    started = rec.get("started_ms") if isinstance(rec.get("started_ms"), int) else None
    if started is not None:
        done += _stale_leftovers(s, started / 1000)
    head = _rev(s.top, "HEAD")
    if op == "merge" and (s.gdir / "MERGE_HEAD").exists() and head == orig \
            and _read(s.gdir / "MERGE_HEAD") == onto:
        code, text = s.git("merge", "--abort")
        if code != 0:
            raise CannotStart(f"cannot abort the merge a killed sync left: {last_line(text)}; "
                              "git merge --abort, then sync again")
        done.append(f"aborted the merge of {onto[:12]} a killed sync left")
    elif op == "merge" and (s.gdir / "MERGE_HEAD").exists() \
            and _read(s.gdir / "MERGE_HEAD") == onto and head is not None \
            and _parents(s.top, head) == [orig, onto]:
        # killed after git made the merge commit, before it removed MERGE_HEAD
        code, text = s.git("merge", "--quit")
        if code != 0:
            raise CannotStart(f"cannot end the merge a killed sync made: {last_line(text)}")
        done.append(f"kept {head[:12]}, the merge a killed sync finished (it is validated "
                    "before it is pushed)")
    elif op == "rebase" and (s.gdir / "rebase-merge").is_dir() \
            and _read(s.gdir / "rebase-merge" / "onto") == onto \
            and _read(s.gdir / "rebase-merge" / "orig-head") == orig:
        code, text = s.git("rebase", "--abort")
        if code != 0:
            raise CannotStart(f"cannot abort the rebase a killed sync left: {last_line(text)}; "
                              "git rebase --abort, then sync again")
        done.append(f"aborted the rebase onto {onto[:12]} a killed sync left")
    elif head is not None and head != orig:
        done.append(f"kept {head[:12]}, the {op} a killed sync finished (it is validated "
                    "before it is pushed)")
    s.forget()
    return done


_TEMP = re.compile(r"^\.merge_file_[A-Za-z0-9]{6}$")


def _open_anywhere(path: Path) -> bool | None:
    """Whether some process has `path` open (Linux /proc); None when it cannot tell."""
    proc = Path("/proc")
    if not (proc / "self" / "fd").is_dir():
        return None
    target = str(path)
    for pid in os.listdir(proc):
        if not pid.isdigit():
            continue
        try:
            fds = os.listdir(proc / pid / "fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(proc / pid / "fd" / fd) == target:
                    return True
            except OSError:
                continue
    return False


def _stale_leftovers(s: Session, since: float) -> list[str]:
    """What the git processes of a sync killed together with them leave: git's lock
    files (index.lock, HEAD.lock, refs/…/*.lock) and the merge driver's temporary
    files, each made after that sync started and, for a lock, held open by no
    process (this sync holds ``sync.lock``, which every git process of the killed one
    inherited: none of them runs)."""
    done = []
    common = git.common_dir(s.top)
    locks = {*s.gdir.glob("*.lock"), *common.glob("*.lock"), *(common / "refs").rglob("*.lock")}
    for lock in sorted(locks):
        try:
            made = lock.lstat().st_mtime
        except OSError:
            continue
        if made >= since - 1 and _open_anywhere(lock) is False:
            lock.unlink(missing_ok=True)
            done.append(f"removed {lock}, left by a git process killed with the sync")
    try:
        names = [n for n in os.listdir(s.top) if _TEMP.match(n)]
    except OSError:
        names = []
    for name in names:
        path = s.top / name
        with contextlib.suppress(OSError):
            if path.lstat().st_mtime >= since - 1 and not git.is_tracked(s.top, name):
                path.unlink()
                done.append(f"removed {name}, a merge driver's file left by a killed sync")
    return done


def last_line(text: str) -> str:
    lines = [x for x in text.strip().splitlines() if x.strip()]
    return lines[-1].strip() if lines else "no message"


def current_branch(top: Path) -> tuple[str, str]:
    """(full ref of the checked-out branch, HEAD's commit id); CannotStart when HEAD is
    detached or the branch has no commit yet."""
    proc = git.run(top, "symbolic-ref", "-q", "HEAD", check=False)
    ref = proc.stdout.decode("utf-8", "surrogateescape").strip()
    if proc.returncode != 0 or not ref.startswith("refs/heads/"):
        raise CannotStart("HEAD is detached: check out the branch to sync first "
                          "(git switch BRANCH)")
    head = _rev(top, "HEAD")
    if head is None:
        named = git.run(top, "rev-parse", "-q", "--verify", ref, check=False)
        if named.returncode == 0:  # the branch names a commit git cannot read
            sha = named.stdout.decode("ascii", "replace").strip()
            raise CannotStart(f"this repository cannot be read: {ref[len('refs/heads/'):]} "
                              f"names commit {sha[:12]}, which git cannot read (a missing "
                              "or corrupt object or pack index): run git fsck")
        raise CannotStart(f"{ref[len('refs/heads/'):]} has no commit yet: commit first "
                          f"({_committing(top)})")
    return ref, head


def _committing(top: Path) -> str:
    """How to commit the state at `top`: `git gasp commit-run`, and `git commit` only
    where the state is the project itself (in the project beside a state branch, `git
    commit` would commit to the user's own branch)."""
    return "git gasp commit-run" if is_state_branch(top) else \
        "git gasp commit-run or git commit"


def refuse_unready(s: Session) -> None:
    """CannotStart when an operation is in progress, git's index is locked, or tracked
    files have uncommitted changes."""
    left = left_conflict(s)
    for name, what, escape in IN_PROGRESS:
        if (s.gdir / name).exists():
            if left is not None and left.get("op") in ("merge", "rebase") \
                    and name.lower().startswith(left["op"]):
                cont = "git commit" if left["op"] == "merge" else "git rebase --continue"
                raise CannotStart(f"the {left['op']} a conflicted git gasp sync left is in "
                                  f"progress: resolve the files, git add them and {cont}, "
                                  "then sync again (or git gasp sync --abort)")
            raise CannotStart(f"{what} ({s.gdir / name}): {escape}, then sync again")
    if left is not None:
        forget_conflict(s)  # the user finished it: nothing is left
    lock = s.gdir / "index.lock"
    if lock.exists():
        raise CannotStart(f"{lock} exists: another git process is running in this clone "
                          "(or one was killed): wait for it, or remove the file if none runs")
    proc = git.run(s.top, "--no-optional-locks", "status", "--porcelain=v1", "-z",
                   "--untracked-files=no", "--ignore-submodules=none", check=False)
    if proc.returncode != 0:
        raise CannotStart(f"git status failed: {last_line(proc.stderr.decode('utf-8', 'replace'))}")
    entries = [e for e in proc.stdout.split(b"\0") if e]
    if entries:
        paths = [os.fsdecode(e[3:]) for e in entries if len(e) > 3][:3]
        more = f" and {len(entries) - len(paths)} more" if len(entries) > len(paths) else ""
        raise CannotStart(f"uncommitted changes to tracked files ({', '.join(paths)}{more}): "
                          f"commit them ({_committing(s.top)}) or git stash them, "
                          "then sync again")
