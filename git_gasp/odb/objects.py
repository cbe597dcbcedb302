"""Reading git objects for the check-4 walk: typed reads from an object store, small
bounded caches, blob lengths, and the append-only entries that differ between two trees
(only trees whose ids differ are descended into). Trees, commits and blobs are read
through dulwich: from the store's packs and loose files by `odb.packs` when `packed` is
set (what does not read cleanly is refused, naming the object), else raw from the store;
trees parsed by dulwich's ``parse_tree`` after git fsck's rules (`odb.fsck`), commits by
dulwich's parser (the plainest shape read here first, with the same answer)."""

from __future__ import annotations

import stat
from collections import namedtuple
from typing import TYPE_CHECKING

from git_gasp.base.digest import is_hex
from git_gasp.odb.errors import ObjectError
from git_gasp.odb.fsck import TreeProblem, check_tree
from git_gasp.protocol.appendonly import AppendOnlyPaths

if TYPE_CHECKING:  # dulwich loads when an object is read: 20 ms off the pre-commit guard
    from collections.abc import Iterator

    from dulwich.object_store import BaseObjectStore

    from git_gasp.odb.packs import PackFiles

_COMMIT, _TREE, _BLOB = 1, 2, 3
_TREE_CACHE_SIZE = 512
_RECENT_BLOB_BYTES = 32 << 20  # a bounded window of recently read blobs, not a content store
PACKED_RECENT_BYTES = 4 << 20  # reading from the mapped packs, a window is seldom needed
MEMO_OBJECT_BYTES = 64 << 10  # a larger object read while `recording` is not recorded


_new = tuple.__new__  # builds a NamedTuple without its keyword-handling __new__


class TreeError(ObjectError):
    """A tree git fsck refuses (`odb.fsck`): `path`, the refused entry's path below the
    tree the read started from (``/``-separated bytes), `problem` the rule it breaks."""

    def __init__(self, sha: bytes, problem: TreeProblem) -> None:
        self.sha, self.problem, self.path = sha, problem, problem.name
        self.top = False  # True once `path` is known to start at the commit's tree
        super().__init__(f"tree {short(sha)} is refused: {problem}")

    def below(self, parent: bytes) -> TreeError:
        """This error with `parent` (a path, b"" for none) prepended to `path`."""
        if parent:
            self.path = parent + b"/" + self.path
        return self


class Entry(namedtuple("Entry", "mode sha")):
    """A tree entry: its mode (int) and object id (raw bytes)."""

    __slots__ = ()


class CommitInfo(namedtuple("CommitInfo", "tree parents")):
    """A commit's tree id (bytes) and its parents' ids (a tuple of bytes)."""

    __slots__ = ()


class Change(namedtuple("Change", "path old new")):
    """A changed path (bytes, relative to the agent root) with its `old` and `new`
    entries: a file entry (blob or symlink), else None."""

    __slots__ = ()


def _fsck(sha: bytes, data: bytes) -> None:
    """Refuse tree `sha` (body `data`) if git fsck would (`odb.fsck.check_tree`)."""
    try:
        check_tree(data)
    except TreeProblem as exc:
        raise TreeError(sha, exc) from None


def plain_commit(data: bytes) -> CommitInfo | None:
    """The tree and parents of a commit object's body of the plainest shape — a tree
    line, parent lines, author and committer lines, then the message — else None (dulwich
    reads the rest). A strict subset of what dulwich reads, with the same tree and parents."""
    head, sep, _ = data.partition(b"\n\n")
    lines = head.split(b"\n")
    if not sep or len(lines) < 3 or not lines[0].startswith(b"tree ") \
            or not is_hex(lines[0][5:], 40) or not _is_ident(lines[-2], b"author ") \
            or not _is_ident(lines[-1], b"committer "):
        return None
    parents = lines[1:-2]
    for line in parents:
        if not line.startswith(b"parent ") or not is_hex(line[7:], 40):
            return None
    return CommitInfo(lines[0][5:], tuple(line[7:] for line in parents))


def commit_info(data: bytes) -> CommitInfo:
    """The tree and parents of any commit object's body: a ``tree`` line, then its
    ``parent`` lines (git's order), as dulwich parses it (`plain_commit` first, the same
    answer for the plainest shape); ValueError for anything else."""
    plain = plain_commit(data)
    if plain is not None:
        return plain
    from dulwich.errors import ObjectFormatException
    from dulwich.objects import Commit

    if not data.startswith(b"tree "):
        raise ValueError("commit does not begin with a tree line")
    try:
        commit = Commit.from_string(data)
    except ObjectFormatException as exc:
        raise ValueError(str(exc)) from None
    if not is_hex(commit.tree or b"", 40):
        raise ValueError(f"invalid tree line {data[:60]!r} (sha1 objects are read)")
    for parent in commit.parents:  # git fsck's badParentSha1
        if not is_hex(parent, 40):
            raise ValueError(f"invalid parent line {parent[:60]!r}")
    return CommitInfo(commit.tree, tuple(commit.parents))


def parse_tree(data: bytes) -> dict[bytes, Entry]:
    """A (sha1) tree object's body as name -> Entry(mode, hex id), by dulwich's parser
    (ValueError, or dulwich's ObjectFormatException, on what it does not read)."""
    from dulwich.objects import parse_tree as dulwich_parse_tree

    return {name: _new(Entry, (mode, hexsha))
            for name, mode, hexsha in dulwich_parse_tree(data, sha_len=20)}


def _is_ident(line: bytes, tag: bytes) -> bool:
    """True for `tag` then ``<anything>> <seconds> <+|-><4 digits>``."""
    if not line.startswith(tag):
        return False
    at = line.rfind(b"> ")
    seconds, space, zone = line[at + 2:].partition(b" ")
    return at >= len(tag) and space == b" " and seconds.isdigit() and len(zone) == 5 \
        and zone[:1] in (b"+", b"-") and zone[1:].isdigit()


def is_tree(mode: int) -> bool:
    return stat.S_ISDIR(mode)


def is_file(mode: int) -> bool:
    """A blob or symlink entry (submodules and trees are not files)."""
    return stat.S_ISREG(mode) or stat.S_ISLNK(mode)


def short(sha: bytes | str) -> str:
    text = sha.decode() if isinstance(sha, bytes) else sha
    return text[:12]


class Objects:
    """Object access for the walk: typed reads, small bounded caches, blob lengths."""

    def __init__(self, store: BaseObjectStore) -> None:
        self._store = store
        self._trees: dict[bytes, dict[bytes, Entry]] = {}
        self._recent: dict[bytes, bytes] = {}
        self._recent_bytes = 0
        self.lengths: dict[bytes, int] = {}
        self.packed: PackFiles | None = None
        self.recent_budget = _RECENT_BLOB_BYTES
        # (type number, content) of objects known by id (hash-checked by whoever fills
        # it), read before the store; `recording`, when set, gets each small object read.
        self.memo: dict[bytes, tuple[int, bytes]] = {}
        self.recording: dict[bytes, tuple[int, bytes]] | None = None

    def _raw(self, sha: bytes, type_num: int) -> bytes:
        """The content of object `sha` of type `type_num`: from the store's packs and
        loose files (`odb.packs`), else (a store of another kind, or an alternate) raw
        from the store; ObjectError naming it when it is missing, unreadable or not that type.
        An object in `memo` is taken from there."""
        got = self.memo.get(sha)
        if got is None and self.packed is not None:
            got = self.packed.read(sha)
        if got is None:
            try:
                got = self._store.get_raw(sha)
            except KeyError:
                raise ObjectError(f"object {sha.decode()} is missing") from None
            except Exception as exc:  # noqa: BLE001 - corrupt data, many exception types
                raise ObjectError(f"object {sha.decode()} is unreadable ({exc})") from exc
        if got[0] != type_num:
            want = {_COMMIT: "commit", _TREE: "tree", _BLOB: "blob"}[type_num]
            raise ObjectError(f"object {sha.decode()} is not a {want}")
        if self.recording is not None and len(got[1]) <= MEMO_OBJECT_BYTES:
            self.recording[sha] = got
        return got[1]

    def commit(self, sha: bytes) -> CommitInfo:
        data = self._raw(sha, _COMMIT)
        try:
            return commit_info(data)
        except ValueError as exc:
            raise ObjectError(f"commit {sha.decode()} is unreadable ({exc})") from None

    def tree(self, sha: bytes) -> dict[bytes, Entry]:
        cached = self._trees.get(sha)
        if cached is not None:
            return cached
        data = self._raw(sha, _TREE)
        _fsck(sha, data)  # what git fsck refuses is refused, whoever parses it
        try:
            entries = parse_tree(data)
        except Exception as exc:  # noqa: BLE001 - dulwich's parser raises several types
            raise ObjectError(f"tree {sha.decode()} is unreadable ({exc})") from None
        if len(self._trees) >= _TREE_CACHE_SIZE:
            self._trees.pop(next(iter(self._trees)))
        self._trees[sha] = entries
        return entries

    def blob(self, sha: bytes) -> bytes:
        data = self._raw(sha, _BLOB)
        self.lengths[sha] = len(data)
        self._remember(sha, data)
        return data

    def recent_blob(self, sha: bytes) -> bytes | None:
        """The content of `sha` if it was read lately (a parent is usually the last child)."""
        return self._recent.get(sha)

    def _remember(self, sha: bytes, data: bytes) -> None:
        if len(data) > self.recent_budget // 4 or sha in self._recent:
            return
        self._recent[sha] = data
        self._recent_bytes += len(data)
        while self._recent_bytes > self.recent_budget:
            self._recent_bytes -= len(self._recent.pop(next(iter(self._recent))))

    def subtree(self, tree_sha: bytes, prefix: bytes) -> bytes | None:
        """Id of the tree at `prefix` below `tree_sha`, or None if there is none."""
        sha = tree_sha
        done = b""
        for part in prefix.split(b"/") if prefix else ():
            try:
                entry = self.tree(sha).get(part)
            except TreeError as exc:
                raise exc.below(done) from None
            if entry is None or not is_tree(entry.mode):
                return None
            sha = entry.sha
            done = done + b"/" + part if done else part
        return sha

    def entry_at(self, tree_sha: bytes | None, path: bytes) -> Entry | None:
        """The file entry (blob or symlink) at `path` below `tree_sha`, or None."""
        if tree_sha is None:
            return None
        head, _, name = path.rpartition(b"/")
        sha = self.subtree(tree_sha, head)
        try:
            entry = self.tree(sha).get(name) if sha is not None else None
        except TreeError as exc:
            raise exc.below(head) from None
        return entry if entry is not None and is_file(entry.mode) else None

    def changes(
        self, old: bytes | None, new: bytes | None, paths: AppendOnlyPaths
    ) -> Iterator[Change]:
        """Append-only file entries that differ between two trees (pruned, iterative)."""
        stack: list[tuple[bytes, bytes | None, bytes | None]] = [(b"", old, new)]
        while stack:
            base, old_sha, new_sha = stack.pop()
            if old_sha == new_sha:
                continue
            try:
                a_entries = self.tree(old_sha) if old_sha else {}
                b_entries = self.tree(new_sha) if new_sha else {}
            except TreeError as exc:
                raise exc.below(base) from None
            for name in sorted({name for name, _ in a_entries.items() ^ b_entries.items()}):
                a, b = a_entries.get(name), b_entries.get(name)
                path = base + b"/" + name if base else name
                a_tree = a is not None and is_tree(a.mode)
                b_tree = b is not None and is_tree(b.mode)
                if a_tree or b_tree:
                    stack.append((path, a.sha if a_tree else None, b.sha if b_tree else None))
                a_file = a if a is not None and is_file(a.mode) else None
                b_file = b if b is not None and is_file(b.mode) else None
                if (a_file or b_file) and path in paths:
                    yield Change(path, a_file, b_file)

    def append_only_files(
        self, tree_sha: bytes, paths: AppendOnlyPaths
    ) -> Iterator[tuple[bytes, Entry]]:
        """Every append-only file entry in a tree (iterative full walk of trees only)."""
        for change in self.changes(None, tree_sha, paths):
            if change.new is not None:
                yield change.path, change.new
