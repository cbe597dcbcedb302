"""The check-4 walk: every commit reachable from HEAD against each of its parents,
parents first, iteratively, over any dulwich object store.

A one-parent change to an append-only file must only append; a merge must keep
every line of each parent; an append-only file is never deleted nor committed as a
symlink. A one-parent extension is proved without reading the parent blob when its
length is known: git blob ids are ``sha1(b"blob <len>\\0" + content)``, so hashing
the first ``len`` bytes of the new blob suffices.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dulwich.object_store import BaseObjectStore

from git_gasp.conformance.history_objects import (
    Change,
    CommitInfo,
    Entry,
    ObjectError,
    Objects,
    short,
)
from git_gasp.protocol.appendonly import (
    LOG_PATH,
    extends_by_hash,
    extension_problem,
    merge_problem,
)
from git_gasp.protocol.failure import Failure

if TYPE_CHECKING:
    from git_gasp.conformance.history_worktree import WorkTree

_UNSHALLOW_HINT = "run `git fetch --unshallow` to check the full history"
APPEND_HINT = "append-only files may only grow at the end; revert it and append a correction"


@dataclass
class HistoryResult:
    """What check 4 found in the git history and the working tree."""

    failures: list[Failure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    commits_walked: int = 0
    # Verified commits known from the cache when the walk stopped at one (0 otherwise):
    # the ancestors skipped, give or take cached commits of other branches.
    commits_cached: int = 0


class Walker:
    """One check-4 run over the commits of one object store.

    `prefix`: the agent root inside the trees (``/``-separated, ``b""`` at the top);
    `declared`: further append-only paths relative to it; `worktree`: where HEAD's
    blobs may be read from disk instead (None: objects only).
    """

    def __init__(
        self, store: BaseObjectStore, prefix: bytes, declared: frozenset[bytes],
        log_path: bytes = LOG_PATH, worktree: WorkTree | None = None,
    ) -> None:
        self.prefix = prefix
        self.declared = declared
        self.log_path = log_path
        self.head_blobs: dict[bytes, bytes] = {}  # append-only path -> HEAD's blob id
        self.worktree = worktree
        self.objects = Objects(store)
        self.result = HistoryResult()
        self.cached: set[bytes] = set()
        self.info: dict[bytes, CommitInfo | str] = {}
        self.bad: set[bytes] = set()

    # ---- reporting helpers

    def _full(self, relpath: bytes) -> str:
        joined = self.prefix + b"/" + relpath if self.prefix else relpath
        return os.fsdecode(joined)

    def fail(self, message: str, *, commit: bytes | None = None,
             path: bytes | None = None, line: int | None = None) -> None:
        self.result.failures.append(Failure(
            message,
            line=line,
            commit=commit.decode() if commit is not None else None,
            path=self._full(path) if path is not None else None,
        ))

    # ---- the walk

    def order(self, head: bytes, shallow: set[bytes]) -> list[bytes]:
        """Commits reachable from `head`, not cached, parents before children."""
        order: list[bytes] = []
        if head in self.cached:
            self.result.commits_cached = len(self.cached)
            return order
        stack: list[tuple[bytes, bool]] = [(head, False)]
        hit_cache = False
        while stack:
            sha, expanded = stack.pop()
            if expanded:
                order.append(sha)
                continue
            if sha in self.info:
                continue
            try:
                info: CommitInfo | str = self.objects.commit(sha)
            except ObjectError as exc:
                info = str(exc)
            self.info[sha] = info
            stack.append((sha, True))
            if isinstance(info, str) or sha in shallow:
                continue
            for parent in reversed(info.parents):
                if parent in self.cached:
                    hit_cache = True
                elif parent not in self.info:
                    stack.append((parent, False))
        self.result.commits_cached = len(self.cached) if hit_cache else 0
        return order

    def note_head_blobs(self, head: bytes) -> None:
        """Remember HEAD's append-only blob ids (best effort; errors surface later)."""
        try:
            root = self.objects.subtree(self.objects.commit(head).tree, self.prefix)
            if root is not None:
                self.head_blobs = {path: e.sha for path, e in
                                   self.objects.append_only_files(root, self.declared)
                                   if stat.S_ISREG(e.mode)}
        except ObjectError:
            self.head_blobs = {}

    def tree_of(self, sha: bytes) -> bytes:
        info = self.info.get(sha)
        if info is None:  # a cached commit: read it now
            info = self.objects.commit(sha)
            self.info[sha] = info
        if isinstance(info, str):
            raise ObjectError(info)
        return info.tree

    def check_commit(self, sha: bytes, info: CommitInfo) -> bool:
        """Compare `sha` with each parent; return True if nothing failed."""
        before = len(self.result.failures)
        new_root = self.objects.subtree(info.tree, self.prefix)
        contents: dict[bytes, bytes] = {}
        symlinks_seen: set[bytes] = set()
        if not info.parents:
            for path, entry in self.objects.append_only_files(new_root, self.declared):
                self._symlink(sha, path, entry, symlinks_seen)
            return len(self.result.failures) == before
        for index, parent in enumerate(info.parents):
            try:
                old_root = self.objects.subtree(self.tree_of(parent), self.prefix)
            except ObjectError as exc:
                if parent not in self.bad:
                    self.fail(f"parent {short(parent)} cannot be read: {exc}", commit=sha)
                self.bad.add(parent)
                continue
            for change in self.objects.changes(old_root, new_root, self.declared):
                self._check_change(sha, parent, index, len(info.parents) > 1, change,
                                   contents, symlinks_seen)
        return len(self.result.failures) == before

    def _symlink(self, sha: bytes, path: bytes, entry: Entry | None, seen: set[bytes]) -> bool:
        """Report an append-only path committed as a symlink; True if it is one."""
        if entry is None or not stat.S_ISLNK(entry.mode):
            return False
        if path not in seen:
            seen.add(path)
            self.fail("append-only path is committed as a symlink (git stores the link, not "
                      "the content); commit the file itself", commit=sha, path=path)
        return True

    def _new_content(self, entry: Entry, contents: dict[bytes, bytes],
                     path: bytes | None = None) -> bytes:
        data = contents.get(entry.sha)
        if data is None:
            data = None
            if path is not None and self.worktree is not None:
                data = self.worktree.head_blob(self, path, entry)
            if data is None:
                data = self.objects.blob(entry.sha)
            contents[entry.sha] = data
        return data

    def _check_change(self, sha: bytes, parent: bytes, index: int, merge: bool,
                      change: Change, contents: dict[bytes, bytes],
                      symlinks_seen: set[bytes]) -> None:
        path, old, new = change
        if self._symlink(sha, path, new, symlinks_seen):
            return
        if old is None or stat.S_ISLNK(old.mode):
            return  # newly added (a symlink replaced by a file counts as added)
        if new is None:
            if not merge:
                self.fail("append-only file was deleted (or replaced by a non-file); restore "
                          "it and only append", commit=sha, path=path)
            else:
                self.fail(f"append-only file of parent {short(parent)} is missing from the "
                          "merge result", commit=sha, path=path)
            return
        if old.sha == new.sha:
            return  # a mode-only change
        try:
            problem = self._compare(index, old, new, contents, path)
        except ObjectError as exc:
            self.fail(f"cannot compare with parent {short(parent)}: {exc}",
                      commit=sha, path=path)
            return
        if problem is None:
            return
        line, reason = problem
        if index == 0:
            self.fail(f"{reason} ({APPEND_HINT})", commit=sha, path=path, line=line)
        else:
            self.fail(f"merge loses lines of parent {short(parent)}: {reason}",
                      commit=sha, path=path, line=line)

    def _compare(self, index: int, old: Entry, new: Entry,
                 contents: dict[bytes, bytes], path: bytes | None = None,
                 ) -> tuple[int, str] | None:
        data = self._new_content(new, contents, path)
        old_data = self.objects.recent_blob(old.sha)
        if index == 0:
            if old_data is None:
                length = self.objects.lengths.get(old.sha)
                if length is not None and extends_by_hash(old.sha, length, data):
                    return None
                old_data = self.objects.blob(old.sha)
            return extension_problem(old_data, data)
        if old_data is None:
            old_data = self.objects.blob(old.sha)
        return merge_problem(old_data, data)

    def walk(self, head: bytes, shallow: set[bytes]) -> set[bytes]:
        """Check every new commit; return the ids that may be cached as verified."""
        verified: set[bytes] = set()
        order = self.order(head, shallow)
        self.result.commits_walked = len(order)
        for sha in order:
            info = self.info[sha]
            if isinstance(info, str):
                self.fail(f"commit cannot be read: {info}", commit=sha)
                self.bad.add(sha)
                continue
            if sha in shallow:
                self.fail(f"shallow clone: the history before this commit is missing, so "
                          f"check 4 cannot verify it; {_UNSHALLOW_HINT}", commit=sha)
                self.bad.add(sha)
                continue
            try:
                ok = self.check_commit(sha, info)
            except ObjectError as exc:
                self.fail(f"commit cannot be checked: {exc}", commit=sha)
                ok = False
            if ok and not any(p in self.bad for p in info.parents):
                verified.add(sha)
            else:
                self.bad.add(sha)
        return verified
