"""The check-4 walk: every commit reachable from HEAD against each of its parents,
parents first, iteratively, over any object store.

Each commit's append-only paths come from its own AGENT.md (and each parent's from
the parent's): moving the log (or facts, journal) is allowed only when the new file
starts with the old one's bytes. A one-parent change to an append-only file must only
append; a merge is judged by meaning (`merges`, the parents' shared
lines stay the start, every parent line is kept, in whatever order git resolved the
concurrent suffixes); an append-only file is never deleted nor committed as a
symlink. A one-parent extension is proved without reading any content when it is in
`Walker.proven` or the pack prover (`prover`) proves it from the deltas; else
without reading the parent blob when its length is known: git blob ids are
``sha1(b"blob <len>\\0" + content)``, so hashing the first ``len`` bytes of the new
blob suffices. A merged file is proven without reading it when the result extends
one parent that way and the other parents' own lines (past what they share with it)
end the result, as the merge driver writes it: the pack prover reads just those
bytes through the deltas. Anything not proven is decided (and described) from
content.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from git_gasp.conformance.history.merges import MergeRule, Side
from git_gasp.conformance.history.prover import PackProver
from git_gasp.conformance.history.result import APPEND_HINT, HistoryResult
from git_gasp.odb.blobid import extends_by_hash
from git_gasp.odb.objects import (
    CommitInfo,
    Entry,
    ObjectError,
    Objects,
    TreeError,
    short,
)
from git_gasp.protocol.appendonly import (
    LOG_PATH,
    AppendOnlyPaths,
    extension_problem,
)
from git_gasp.protocol.failure import Failure
from git_gasp.protocol.manifest import AGENT_DIR, LOCAL_ONLY, manifest_paths

if TYPE_CHECKING:  # dulwich's types: dulwich loads only where objects are read
    from git_gasp.odb.repo import BaseObjectStore


class WorkTree(Protocol):
    """What the walk asks of the working tree (``worktree.WorkTree``, which builds on
    the walk: this module never imports that one)."""

    def head_blob(self, walker: Walker, path: bytes, entry: Entry) -> bytes | None: ...

    def extends_in_file(self, walker: Walker, path: bytes, entry: Entry,
                        old_sha: bytes, length: int | None) -> bool: ...

Progress = Callable[[int, int], None]
_PROGRESS_EVERY = 0.25  # seconds between progress calls

_UNSHALLOW_HINT = "run `git fetch --unshallow` to check the full history"


class Walker(MergeRule):
    """One check-4 run over the commits of one object store.

    `prefix`: the agent root inside the trees (``/``-separated, ``b""`` at the top);
    `declared`: further append-only paths relative to it; `worktree`: where HEAD's
    blobs may be read from disk instead (None: objects only); `progress`: called as
    (commits walked, commits to walk) at most every quarter second, and once at the
    end if it was called at all.

    `proven` holds (old blob id, new blob id) pairs known to satisfy the one-parent
    extension rule (new starts with old; an unterminated last line of old is not
    extended): consulted before any content is read, and filled by `prover` (a
    `prover.PackProver`, or None) as it proves pairs from pack deltas.
    """

    def __init__(
        self, store: BaseObjectStore, prefix: bytes, declared: frozenset[bytes],
        log_path: bytes = LOG_PATH, worktree: WorkTree | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.prefix = prefix
        self.declared = declared
        self.log_path = log_path
        self.head_blobs: dict[bytes, bytes] = {}  # append-only path -> HEAD's blob id
        self.head_objects: dict[bytes, tuple[int, bytes]] = {}  # read to find them
        self.worktree = worktree
        self.objects = Objects(store)
        self.result = HistoryResult()
        self.cached: set[bytes] = set()
        self.info: dict[bytes, CommitInfo | str] = {}
        self.bad: set[bytes] = set()
        self.commit_paths: dict[bytes, AppendOnlyPaths] = {}
        self._by_manifest: dict[bytes | None, AppendOnlyPaths] = {}
        self._unions: dict[tuple[int, int], tuple[AppendOnlyPaths, AppendOnlyPaths,
                                                  AppendOnlyPaths]] = {}
        self.proven: set[tuple[bytes, bytes]] = set()
        self.prover: PackProver | None = None
        self.progress = progress

    # ---- reporting helpers

    def full_path(self, relpath: bytes) -> str:
        """`relpath` (relative to the agent root) as a path of the work tree, for users."""
        joined = self.prefix + b"/" + relpath if self.prefix else relpath
        return os.fsdecode(joined)

    def fail(self, message: str, *, commit: bytes | None = None,
             path: bytes | None = None, line: int | None = None) -> None:
        self.result.failures.append(Failure(
            message,
            line=line,
            commit=commit.decode() if commit is not None else None,
            path=self.full_path(path) if path is not None else None,
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

    def paths_of(self, sha: bytes, root: bytes | None) -> AppendOnlyPaths:
        """The append-only paths of commit `sha` (agent root tree `root`), from its own
        AGENT.md: read only when its blob id is one not seen before."""
        found = self.commit_paths.get(sha)
        if found is None:
            entry = self.objects.entry_at(root, b"AGENT.md")
            key = entry.sha if entry is not None and stat.S_ISREG(entry.mode) else None
            found = self._by_manifest.get(key)
            if found is None:
                data = self.objects.blob(key) if key is not None else None
                found = manifest_paths(data, self.declared)
                self._by_manifest[key] = found
            self.commit_paths[sha] = found
        return found

    def _union(self, parent: AppendOnlyPaths, child: AppendOnlyPaths) -> AppendOnlyPaths:
        """`parent.union(child)`, made once per pair (they are shared by manifest)."""
        key = (id(parent), id(child))
        found = self._unions.get(key)
        if found is None or found[0] is not parent or found[1] is not child:
            found = self._unions[key] = (parent, child, parent.union(child))
        return found[2]

    def note_head_blobs(self, head: bytes) -> None:
        """Remember HEAD's append-only blob ids, and in `head_objects` the small objects
        read to find them (best effort; errors surface later)."""
        self.objects.recording = self.head_objects
        try:
            root = self.objects.subtree(self.objects.commit(head).tree, self.prefix)
            if root is not None:
                paths = self.paths_of(head, root)
                self.head_blobs = {path: e.sha for path, e in
                                   self.objects.append_only_files(root, paths)
                                   if stat.S_ISREG(e.mode)}
        except ObjectError:
            self.head_blobs = {}
        finally:
            self.objects.recording = None

    def tree_of(self, sha: bytes) -> bytes:
        info = self.info.get(sha)
        if info is None:  # a cached commit: read it now
            info = self.objects.commit(sha)
            self.info[sha] = info
        if isinstance(info, str):
            raise ObjectError(info)
        return info.tree

    def check_commit(self, sha: bytes, info: CommitInfo) -> bool:
        """Compare `sha` with its parents; return True if nothing failed."""
        before = len(self.result.failures)
        try:
            new_root = self.objects.subtree(info.tree, self.prefix)
        except TreeError as exc:
            exc.top = True  # its path starts at the commit's tree, not the agent root
            raise
        child = self.paths_of(sha, new_root)
        seen: set[bytes] = set()
        if not info.parents:
            for path, entry in self.objects.append_only_files(new_root, child):
                self._symlink(sha, path, entry, seen)
            return len(self.result.failures) == before
        sides: list[Side] = []
        for parent in info.parents:
            try:
                old_root = self.objects.subtree(self.tree_of(parent), self.prefix)
                sides.append(Side(parent, old_root, self.paths_of(parent, old_root)))
            except ObjectError as exc:
                if parent not in self.bad:
                    self.fail(f"parent {short(parent)} cannot be read: {exc}", commit=sha)
                self.bad.add(parent)
        self._local_only(sha, new_root, sides, len(sides) == len(info.parents))
        if len(info.parents) == 1:
            for side in sides:
                self._one_parent(sha, side, new_root, child, seen)
        else:
            self._merge(sha, sides, new_root, child, seen)
        return len(self.result.failures) == before

    # ---- the local-only files: never committed

    def _local_only(self, sha: bytes, new_root: bytes | None, sides: list[Side],
                    complete: bool) -> None:
        """Fail a commit that adds or changes ``.agent/lease`` or ``.agent/HEAD``: the
        spec makes them machine-local and gitignored (a lease in history is meaningless
        on clone). The ``.agent`` tree is read only when it differs from every parent's
        (`complete`: every parent could be read); what a parent has is its report."""
        here = self._agent_dir(new_root)
        if here is None:
            return
        parents = [self._agent_dir(side.root) for side in sides] if complete else []
        if parents and all(p == here for p in parents):
            return
        entries = self.objects.tree(here)
        for name in LOCAL_ONLY:
            entry = entries.get(name)
            if entry is None or any(p is not None and self.objects.tree(p).get(name) == entry
                                    for p in parents):
                continue
            path = AGENT_DIR + b"/" + name
            self.fail(f"{self.full_path(path)} is committed: it is local-only state that "
                      "must be gitignored (spec Part I); remove it from the commits that hold "
                      "it (`git rm --cached`) and keep it in .gitignore", commit=sha, path=path)

    def _agent_dir(self, root: bytes | None) -> bytes | None:
        """The id of the ``.agent`` tree in the agent root tree `root`, if any."""
        entry = self.objects.tree(root).get(AGENT_DIR) if root is not None else None
        return entry.sha if entry is not None and stat.S_ISDIR(entry.mode) else None

    # ---- one parent: the new version of each append-only file extends the old one

    def _one_parent(self, sha: bytes, side: Side, new_root: bytes | None,
                    child: AppendOnlyPaths, seen: set[bytes]) -> None:
        contents: dict[bytes, bytes] = {}
        moves = side.paths.moves(child)
        for path, old, new in self.objects.changes(side.root, new_root,
                                                    self._union(side.paths, child)):
            if path in child and self._symlink(sha, path, new, seen):
                continue
            if path not in side.paths or path in moves:
                continue  # newly append-only, or a moved role (below)
            self._extends(sha, side.sha, path, old, path, new, contents)
        for old_path, (role, new_path) in moves.items():
            old = self.objects.entry_at(side.root, old_path)
            if old is None or not stat.S_ISREG(old.mode):
                continue  # nothing to keep
            new = self.objects.entry_at(new_root, new_path)
            if new is not None and stat.S_ISLNK(new.mode):
                self._symlink(sha, new_path, new, seen)
                continue
            if new is None and self.objects.entry_at(new_root, old_path) is not None:
                # The file stayed where it was: it must still only grow there.
                self._extends(sha, side.sha, old_path, old, old_path,
                              self.objects.entry_at(new_root, old_path), contents)
                continue
            self._extends(sha, side.sha, old_path, old, new_path, new, contents, role)

    def _extends(self, sha: bytes, parent: bytes, old_path: bytes, old: Entry | None,
                 new_path: bytes, new: Entry | None, contents: dict[bytes, bytes],
                 role: str | None = None) -> None:
        """The one-parent rule for `old_path` of the parent against `new_path` here."""
        if old is None or stat.S_ISLNK(old.mode):
            return  # newly added (a symlink replaced by a file counts as added)
        if new is not None and stat.S_ISLNK(new.mode):
            return  # reported as a symlink
        moved = "" if role is None else (
            f" (the manifest moves the {role} from {self.full_path(old_path)} to "
            f"{self.full_path(new_path)})")
        if new is None:
            if role is None:
                self.fail("append-only file was deleted (or replaced by a non-file); restore "
                          "it and only append", commit=sha, path=old_path)
            else:
                self.fail(f"append-only file was deleted{moved}, but {self.full_path(new_path)} is "
                          f"not in the commit: the {role}'s history is dropped; commit it "
                          f"there starting with the old file's bytes", commit=sha, path=old_path)
            return
        if old.sha == new.sha:
            return  # a mode-only change (or a pure move)
        if self.extends_proven(old.sha, new.sha):
            return
        self.result.stats.read += 1
        if self.worktree is not None and self.worktree.extends_in_file(
                self, new_path, new, old.sha, self._length(old.sha)):
            self.proven.add((old.sha, new.sha))
            return
        try:
            data = self._new_content(new, contents, new_path)
            old_data = self.objects.recent_blob(old.sha)
            problem = None
            if old_data is None:
                length = self._length(old.sha)
                if length is None or not extends_by_hash(old.sha, length, data):
                    old_data = self.objects.blob(old.sha)
            if old_data is not None:
                problem = extension_problem(old_data, data)
        except ObjectError as exc:
            self.fail(f"cannot compare with parent {short(parent)}: {exc}",
                      commit=sha, path=new_path)
            return
        if problem is not None:
            line, reason = problem
            self.fail(f"{reason}{moved} ({APPEND_HINT})", commit=sha, path=new_path, line=line)

    def extends_proven(self, old: bytes, new: bytes) -> bool:
        """True if blob `new` is known (`proven`) or proven from the packs to satisfy
        the one-parent extension rule against blob `old`; reads no content."""
        stats = self.result.stats
        if (old, new) in self.proven:
            stats.proven_known += 1
            return True
        if self.prover is not None and self.prover.proves(old, new):
            self.proven.add((old, new))
            length = self.prover.length(new)
            if length is not None:
                self.objects.lengths[new] = length
            stats.proven_packs += 1
            return True
        return False

    def _length(self, sha: bytes) -> int | None:
        """A blob's length if known without reading it (a hint: it is hash-checked)."""
        length = self.objects.lengths.get(sha)
        if length is None and self.prover is not None:
            length = self.prover.length(sha)
        return length

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

    def walk(self, head: bytes, shallow: set[bytes]) -> set[bytes]:
        """Check every new commit; return the ids that may be cached as verified."""
        verified: set[bytes] = set()
        order = self.order(head, shallow)
        self.result.commits_walked = total = len(order)
        last = time.monotonic()
        told = False
        for done, sha in enumerate(order):
            if self.progress is not None and done and time.monotonic() - last >= _PROGRESS_EVERY:
                self.progress(done, total)
                last, told = time.monotonic(), True
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
            except TreeError as exc:  # fail closed, naming the entry git fsck refuses
                path = os.fsdecode(exc.path) if exc.top else self.full_path(exc.path)
                self.result.failures.append(Failure(str(exc), commit=sha.decode(), path=path))
                ok = False
            except ObjectError as exc:
                self.fail(f"commit cannot be checked: {exc}", commit=sha)
                ok = False
            if ok and not any(p in self.bad for p in info.parents):
                verified.add(sha)
            else:
                self.bad.add(sha)
        if told and self.progress is not None:
            self.progress(total, total)
        return verified
