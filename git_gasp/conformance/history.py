"""Check 4 (append-only-in-git) over the whole commit DAG, with a local cache.

Every commit reachable from HEAD is compared with each of its parents, parents
first, iteratively. Only trees whose ids differ are descended into and only blobs
whose ids differ are read. A one-parent extension is proved without reading the
parent blob when its length is known: git blob ids are ``sha1(b"blob <len>\\0" +
content)``, so hashing the first ``len`` bytes of the new blob suffices.

Verified commits are remembered under the git dir; a commit id pins its whole
ancestry, so a later run stops at them and only walks new commits.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import re
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

from dulwich.index import FLAG_VALID, Index, IndexEntry
from dulwich.objects import Commit, Tree
from dulwich.repo import Repo

from git_gasp.protocol.appendonly import (
    LOG_PATH,
    extends_by_hash,
    extension_problem,
    is_append_only,
    merge_problem,
)
from git_gasp.protocol.failure import Failure
from git_gasp.store.gitrepo import open_repo, shallow_commits

CHECKER_VERSION = 1
_BLOB = 3
_TREE_CACHE_SIZE = 512
_INDEX_COST_RATIO = 64  # parsing an index byte costs about as much as reading 64 file bytes
_RECENT_BLOB_BYTES = 32 << 20  # a bounded window of recently read blobs, not a content store
_CACHE_MAGIC = b"git-gasp check4 cache"
_UNSHALLOW_HINT = "run `git fetch --unshallow` to check the full history"
_APPEND_HINT = "append-only files may only grow at the end; revert it and append a correction"


@dataclass
class HistoryResult:
    """What check 4 found in the git history and the working tree."""

    failures: list[Failure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    commits_walked: int = 0
    # Verified commits known from the cache when the walk stopped at one (0 otherwise):
    # the ancestors skipped, give or take cached commits of other branches.
    commits_cached: int = 0


class _ObjectError(Exception):
    """An object that is missing, corrupt or of the wrong type."""


class _Entry(NamedTuple):
    mode: int
    sha: bytes


class _CommitInfo(NamedTuple):
    tree: bytes
    parents: tuple[bytes, ...]


class _Change(NamedTuple):
    path: bytes  # relative to the agent root
    old: _Entry | None  # a file entry (blob or symlink), else None
    new: _Entry | None


def _is_tree(mode: int) -> bool:
    return stat.S_ISDIR(mode)


def _is_file(mode: int) -> bool:
    """A blob or symlink entry (submodules and trees are not files)."""
    return stat.S_ISREG(mode) or stat.S_ISLNK(mode)


def _short(sha: bytes | str) -> str:
    text = sha.decode() if isinstance(sha, bytes) else sha
    return text[:12]


_WORKTREE_READ_MIN = 1 << 16  # below this, inflating the object is as cheap as reading


class _Objects:
    """Object access for the walk: typed reads, small bounded caches, blob lengths."""

    def __init__(self, repo: Repo) -> None:
        self._store = repo.object_store
        self._trees: dict[bytes, dict[bytes, _Entry]] = {}
        self._recent: dict[bytes, bytes] = {}
        self._recent_bytes = 0
        self.lengths: dict[bytes, int] = {}

    def _get(self, sha: bytes, cls: type) -> object:
        try:
            obj = self._store[sha]
        except KeyError:
            raise _ObjectError(f"object {sha.decode()} is missing") from None
        except Exception as exc:  # corrupt data surfaces as many exception types
            raise _ObjectError(f"object {sha.decode()} is unreadable ({exc})") from exc
        if not isinstance(obj, cls):
            raise _ObjectError(f"object {sha.decode()} is a {obj.type_name.decode()}, "
                               f"expected a {cls.type_name.decode()}")
        return obj

    def commit(self, sha: bytes) -> _CommitInfo:
        obj = self._get(sha, Commit)
        return _CommitInfo(obj.tree, tuple(obj.parents))

    def tree(self, sha: bytes) -> dict[bytes, _Entry]:
        cached = self._trees.get(sha)
        if cached is not None:
            return cached
        obj = self._get(sha, Tree)
        entries = {e.path: _Entry(e.mode, e.sha) for e in obj.iteritems()}
        if len(self._trees) >= _TREE_CACHE_SIZE:
            self._trees.pop(next(iter(self._trees)))
        self._trees[sha] = entries
        return entries

    def blob(self, sha: bytes) -> bytes:
        try:
            type_num, data = self._store.get_raw(sha)
        except KeyError:
            raise _ObjectError(f"blob {sha.decode()} is missing") from None
        except Exception as exc:
            raise _ObjectError(f"blob {sha.decode()} is unreadable ({exc})") from exc
        if type_num != _BLOB:
            raise _ObjectError(f"object {sha.decode()} is not a blob")
        self.lengths[sha] = len(data)
        self._remember(sha, data)
        return data

    def recent_blob(self, sha: bytes) -> bytes | None:
        """The content of `sha` if it was read lately (a parent is usually the last child)."""
        return self._recent.get(sha)

    def _remember(self, sha: bytes, data: bytes) -> None:
        if len(data) > _RECENT_BLOB_BYTES // 4 or sha in self._recent:
            return
        self._recent[sha] = data
        self._recent_bytes += len(data)
        while self._recent_bytes > _RECENT_BLOB_BYTES:
            self._recent_bytes -= len(self._recent.pop(next(iter(self._recent))))

    def subtree(self, tree_sha: bytes, prefix: bytes) -> bytes | None:
        """Id of the tree at `prefix` below `tree_sha`, or None if there is none."""
        sha = tree_sha
        for part in prefix.split(b"/") if prefix else ():
            entry = self.tree(sha).get(part)
            if entry is None or not _is_tree(entry.mode):
                return None
            sha = entry.sha
        return sha

    def changes(
        self, old: bytes | None, new: bytes | None, declared: frozenset[bytes]
    ) -> Iterator[_Change]:
        """Append-only file entries that differ between two trees (pruned, iterative)."""
        stack: list[tuple[bytes, bytes | None, bytes | None]] = [(b"", old, new)]
        while stack:
            base, old_sha, new_sha = stack.pop()
            if old_sha == new_sha:
                continue
            a_entries = self.tree(old_sha) if old_sha else {}
            b_entries = self.tree(new_sha) if new_sha else {}
            for name in sorted(a_entries.keys() | b_entries.keys()):
                a, b = a_entries.get(name), b_entries.get(name)
                if a == b:
                    continue
                path = base + b"/" + name if base else name
                a_tree = a is not None and _is_tree(a.mode)
                b_tree = b is not None and _is_tree(b.mode)
                if a_tree or b_tree:
                    stack.append((path, a.sha if a_tree else None, b.sha if b_tree else None))
                a_file = a if a is not None and _is_file(a.mode) else None
                b_file = b if b is not None and _is_file(b.mode) else None
                if (a_file or b_file) and is_append_only(path, declared):
                    yield _Change(path, a_file, b_file)

    def append_only_files(
        self, tree_sha: bytes, declared: frozenset[bytes]
    ) -> Iterator[tuple[bytes, _Entry]]:
        """Every append-only file entry in a tree (iterative full walk of trees only)."""
        for change in self.changes(None, tree_sha, declared):
            if change.new is not None:
                yield change.path, change.new


# --------------------------------------------------------------------------- cache


def _cache_key(prefix: bytes, declared: frozenset[bytes]) -> str:
    material = b"\x00".join([b"%d" % CHECKER_VERSION, prefix, *sorted(declared)])
    return hashlib.sha256(material).hexdigest()[:20]


_CACHE_BODY = re.compile(rb"(?:C [0-9a-f]{40}\n)*(?:L [0-9a-f]{40} [0-9]{1,15}\n)*")


class _Cache:
    """Verified commit ids (+ blob lengths at the last verified tip), one file per key."""

    def __init__(self, repo: Repo, prefix: bytes, declared: frozenset[bytes]) -> None:
        self.key = _cache_key(prefix, declared)
        self.path = os.path.join(repo.commondir(), "gasp", f"check4-{self.key}.cache")
        self.commits: set[bytes] = set()
        self.lengths: dict[bytes, int] = {}
        self.problem: str | None = None

    def load(self) -> None:
        """Read the file; anything malformed makes the whole cache empty (never fatal)."""
        try:
            with open(self.path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return
        except OSError as exc:
            self.problem = f"check-4 cache unreadable, ignored ({exc})"
            return
        header = _CACHE_MAGIC + b"\nkey " + self.key.encode() + b"\n"
        if not (data.startswith(header) and _CACHE_BODY.fullmatch(data, len(header))):
            self.problem = "check-4 cache was corrupt and has been ignored"
            return
        for line in data[len(header):].splitlines():
            if line.startswith(b"C "):
                self.commits.add(line[2:])
            else:
                self.lengths[line[2:42]] = int(line[43:])

    def save(self, commits: set[bytes], lengths: dict[bytes, int]) -> str | None:
        """Write atomically (tmp + rename); return a note if that failed."""
        body = [_CACHE_MAGIC, b"key " + self.key.encode()]
        body += [b"C " + c for c in sorted(commits)]
        body += [b"L %s %d" % item for item in sorted(lengths.items())]
        tmp = f"{self.path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            with open(tmp, "wb") as f:
                f.write(b"\n".join(body) + b"\n")
            os.replace(tmp, self.path)
        except OSError as exc:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            return f"could not write the check-4 cache ({exc})"
        return None


# --------------------------------------------------------------------------- walk


class _Walker:
    """One check-4 run over one repository."""

    def __init__(
        self, repo: Repo, prefix: bytes, declared: frozenset[bytes], agent_root: pathlib.Path,
        log_path: bytes = LOG_PATH,
    ) -> None:
        self.repo = repo
        self.prefix = prefix
        self.declared = declared
        self.log_path = log_path
        self.head_blobs: dict[bytes, bytes] = {}  # append-only path -> HEAD's blob id
        self._stat_index: _StatIndex | None = None
        self.agent_root = agent_root
        self.objects = _Objects(repo)
        self.result = HistoryResult()
        self.cached: set[bytes] = set()
        self.info: dict[bytes, _CommitInfo | str] = {}
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
                info: _CommitInfo | str = self.objects.commit(sha)
            except _ObjectError as exc:
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
        except _ObjectError:
            self.head_blobs = {}

    def tree_of(self, sha: bytes) -> bytes:
        info = self.info.get(sha)
        if info is None:  # a cached commit: read it now
            info = self.objects.commit(sha)
            self.info[sha] = info
        if isinstance(info, str):
            raise _ObjectError(info)
        return info.tree

    def check_commit(self, sha: bytes, info: _CommitInfo) -> bool:
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
            except _ObjectError as exc:
                if parent not in self.bad:
                    self.fail(f"parent {_short(parent)} cannot be read: {exc}", commit=sha)
                self.bad.add(parent)
                continue
            for change in self.objects.changes(old_root, new_root, self.declared):
                self._check_change(sha, parent, index, len(info.parents) > 1, change,
                                   contents, symlinks_seen)
        return len(self.result.failures) == before

    def _symlink(self, sha: bytes, path: bytes, entry: _Entry | None, seen: set[bytes]) -> bool:
        """Report an append-only path committed as a symlink; True if it is one."""
        if entry is None or not stat.S_ISLNK(entry.mode):
            return False
        if path not in seen:
            seen.add(path)
            self.fail("append-only path is committed as a symlink (git stores the link, not "
                      "the content); commit the file itself", commit=sha, path=path)
        return True

    def _new_content(self, entry: _Entry, contents: dict[bytes, bytes],
                     path: bytes | None = None) -> bytes:
        data = contents.get(entry.sha)
        if data is None:
            data = self._from_working_tree(path, entry) if path is not None else None
            if data is None:
                data = self.objects.blob(entry.sha)
            contents[entry.sha] = data
        return data

    def _from_working_tree(self, path: bytes, entry: _Entry) -> bytes | None:
        """The blob's bytes read from the working tree, when the file is that blob.

        Only tried for the blob HEAD holds at `path` (the commit a re-check walks is
        usually HEAD): reading a big file beats inflating the object. The file counts
        as the blob when git's own stat test says so (as `git status` trusts it), else
        when its sha1 as a git blob equals the blob id.
        """
        if self.head_blobs.get(path) != entry.sha:
            return None
        full = self.agent_root / os.fsdecode(path)
        try:
            st = os.lstat(full)
            if not stat.S_ISREG(st.st_mode) or st.st_size < _WORKTREE_READ_MIN:
                return None
            data = full.read_bytes()
        except OSError:
            return None
        if self._stat_index is None:
            self._stat_index = _StatIndex(self.repo, st.st_size)
        in_repo = self.prefix + b"/" + path if self.prefix else path
        if len(data) == st.st_size and self._stat_index.unchanged(in_repo, entry.sha, st):
            self.objects.lengths[entry.sha] = len(data)
            return data  # git's own stat test: the file holds the staged (= HEAD) blob
        digest = hashlib.sha1(b"blob %d\x00" % len(data))
        digest.update(data)
        if digest.hexdigest().encode() != entry.sha:
            return None
        self.objects.lengths[entry.sha] = len(data)
        return data

    def _check_change(self, sha: bytes, parent: bytes, index: int, merge: bool,
                      change: _Change, contents: dict[bytes, bytes],
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
                self.fail(f"append-only file of parent {_short(parent)} is missing from the "
                          "merge result", commit=sha, path=path)
            return
        if old.sha == new.sha:
            return  # a mode-only change
        try:
            problem = self._compare(index, old, new, contents, path)
        except _ObjectError as exc:
            self.fail(f"cannot compare with parent {_short(parent)}: {exc}",
                      commit=sha, path=path)
            return
        if problem is None:
            return
        line, reason = problem
        if index == 0:
            self.fail(f"{reason} ({_APPEND_HINT})", commit=sha, path=path, line=line)
        else:
            self.fail(f"merge loses lines of parent {_short(parent)}: {reason}",
                      commit=sha, path=path, line=line)

    def _compare(self, index: int, old: _Entry, new: _Entry,
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
            except _ObjectError as exc:
                self.fail(f"commit cannot be checked: {exc}", commit=sha)
                ok = False
            if ok and not any(p in self.bad for p in info.parents):
                verified.add(sha)
            else:
                self.bad.add(sha)
        return verified

    # ---- HEAD and the working tree

    def check_head(self, head: bytes) -> dict[bytes, int]:
        """The log is committed and the working tree extends HEAD; return tip lengths."""
        tip_lengths: dict[bytes, int] = {}
        try:
            root = self.objects.subtree(self.tree_of(head), self.prefix)
            files = list(self.objects.append_only_files(root, self.declared)) if root else []
        except _ObjectError as exc:
            self.fail(f"HEAD cannot be read: {exc}", commit=head)
            return tip_lengths
        if not any(path == self.log_path and stat.S_ISREG(e.mode) for path, e in files):
            self.fail(f"{os.fsdecode(self.log_path)} is not committed in HEAD: the log is not "
                      "committed", path=self.log_path)
        files = [(path, entry) for path, entry in files if stat.S_ISREG(entry.mode)]
        stats = {path: self._lstat(path) for path, _ in files}
        index = _StatIndex(self.repo, sum(st.st_size for st in stats.values()
                                          if isinstance(st, os.stat_result)))
        for path, entry in files:
            self._check_working_file(path, entry, stats[path], index)
            if entry.sha in self.objects.lengths:
                tip_lengths[entry.sha] = self.objects.lengths[entry.sha]
        return tip_lengths

    def _lstat(self, path: bytes) -> os.stat_result | OSError:
        try:
            return os.lstat(self.agent_root / os.fsdecode(path))
        except OSError as exc:
            return exc

    def _check_working_file(self, path: bytes, entry: _Entry,
                            st: os.stat_result | OSError, index: _StatIndex) -> None:
        if isinstance(st, FileNotFoundError):
            self.fail("working tree: committed append-only file is missing; restore it with "
                      "`git checkout HEAD -- <path>`", path=path)
            return
        if isinstance(st, os.stat_result) and stat.S_ISLNK(st.st_mode):
            self.fail("working tree: append-only file is a symlink", path=path)
            return
        if isinstance(st, os.stat_result) and not stat.S_ISREG(st.st_mode):
            # Never open a FIFO or device: reading it could block or never end.
            self.fail("working tree: append-only file is not a regular file", path=path)
            return
        full = self.prefix + b"/" + path if self.prefix else path
        if isinstance(st, os.stat_result) and index.unchanged(full, entry.sha, st):
            return  # git's own stat test says the file holds the committed blob
        try:
            if isinstance(st, OSError):
                raise st
            data = (self.agent_root / os.fsdecode(path)).read_bytes()
        except OSError as exc:
            self.fail(f"working tree: cannot read the file ({exc})", path=path)
            return
        committed = self.objects.recent_blob(entry.sha)
        if committed is None:
            length = self.objects.lengths.get(entry.sha)
            if length is not None and extends_by_hash(entry.sha, length, data):
                return
        try:
            if committed is None:
                committed = self.objects.blob(entry.sha)
            problem = extension_problem(committed, data)
        except _ObjectError as exc:
            self.fail(f"working tree: cannot read the committed version: {exc}", path=path)
            return
        if problem is not None:
            line, reason = problem
            self.fail(f"working tree does not extend HEAD: {reason} ({_APPEND_HINT})",
                      path=path, line=line)


def _ns(stamp: object) -> int | None:
    """A (sec, nsec) index time stamp in nanoseconds; None if its precision is unknown."""
    if isinstance(stamp, tuple) and len(stamp) == 2:
        return stamp[0] * 1_000_000_000 + stamp[1]
    return None


class _StatIndex:
    """git's stat test: a file whose lstat matches its non-racy index entry holds that blob.

    Used only when parsing the index is much cheaper than reading the files; any
    doubt (racy entry, flags, missing nanoseconds, unreadable index) means "read it".
    """

    def __init__(self, repo: Repo, file_bytes: int) -> None:
        self.index: Index | None = None
        try:
            st = os.stat(repo.index_path())
            if st.st_size * _INDEX_COST_RATIO >= file_bytes:
                return
            self.index_mtime_ns = st.st_mtime_ns
            self.index = repo.open_index()
        except Exception:  # no index, or one we cannot parse: read the files instead
            self.index = None

    def unchanged(self, path: bytes, sha: bytes, st: os.stat_result) -> bool:
        if self.index is None:
            return False
        try:
            e = self.index[path]
        except KeyError:
            return False
        if not isinstance(e, IndexEntry) or e.sha != sha or e.flags & FLAG_VALID:
            return False
        mtime, ctime = _ns(e.mtime), _ns(e.ctime)
        if e.extended_flags or mtime is None or ctime is None:
            return False
        mask = 0xFFFFFFFF
        return (
            mtime < self.index_mtime_ns  # not racily clean
            and e.size == st.st_size & mask
            and e.ino == st.st_ino & mask
            and mtime == (st.st_mtime_ns // 1_000_000_000 & mask) * 1_000_000_000
            + st.st_mtime_ns % 1_000_000_000
            and ctime == (st.st_ctime_ns // 1_000_000_000 & mask) * 1_000_000_000
            + st.st_ctime_ns % 1_000_000_000
        )


def _head(repo: Repo) -> bytes | None:
    try:
        return repo.refs[b"HEAD"]
    except KeyError:
        return None


def check_history(
    agent_root: pathlib.Path, *, declared: Iterable[bytes] = (), use_cache: bool = True,
    log_path: bytes = LOG_PATH,
) -> HistoryResult:
    """Run check 4 on the repository around `agent_root`.

    `declared` adds append-only paths relative to the agent root (from the
    manifest); `log_path` is where the manifest puts the event log (it is
    append-only and must be committed). Raises NotAGitRepo when `agent_root` is
    not in a git work tree; every other problem is reported as a failure.
    """
    agent_root = pathlib.Path(agent_root)
    wanted = frozenset(os.fsencode(p).replace(b"\\", b"/").strip(b"/") for p in declared)
    if log_path != LOG_PATH:
        wanted |= {log_path}
    repo, prefix = open_repo(agent_root)
    try:
        walker = _Walker(repo, prefix, wanted, agent_root, log_path)
        try:
            _run(walker, use_cache)
        except Exception as exc:  # fail closed, never crash
            walker.fail(f"history walk failed: {type(exc).__name__}: {exc}")
        return walker.result
    finally:
        repo.close()


def _run(walker: _Walker, use_cache: bool) -> None:
    repo = walker.repo
    head = _head(repo)
    if head is None:
        walker.fail("no commits yet: the log is not committed")
        return
    cache = _Cache(repo, walker.prefix, walker.declared) if use_cache else None
    if cache is not None:
        cache.load()
        if cache.problem:
            walker.result.notes.append(cache.problem)
        walker.cached = cache.commits
        walker.objects.lengths.update(cache.lengths)
    walker.note_head_blobs(head)
    verified = walker.walk(head, shallow_commits(repo))
    tip_lengths = walker.check_head(head)
    result = walker.result
    if cache is not None and (verified or (tip_lengths and tip_lengths != cache.lengths)):
        # Lengths are only hints: a wrong one fails the hash check and falls back.
        problem = cache.save(cache.commits | verified, tip_lengths or cache.lengths)
        if problem:
            result.notes.append(problem)
