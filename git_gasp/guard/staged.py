"""What the guard compares: the index git commits (``GIT_INDEX_FILE`` when git sets
it), HEAD and every merged parent as path -> (mode, blob id), and the blobs' bytes.

Only what changed is read. ``git diff-index --cached`` against HEAD (the empty tree
when the branch is unborn) and against each merged parent names the paths whose index
entry differs from that commit's, with the index's (mode, blob id); every other path of
the index holds HEAD's entry. Git reads the index itself, so a split index, a sparse
index, a conflict (an unmerged path) and an intent-to-add entry (absent: `git commit`
leaves it out) mean what they mean to the commit being made; paths are compared byte
for byte, as the commit stores them (``core.ignorecase`` only changes how git matches
work-tree names to index entries). HEAD's entry for a changed path is the diff's; a
commit's entry for any other path is looked up by ``git ls-tree`` (the few paths the
guard asks about, in one process per commit), never by reading whole trees. A staged
blob is read from its work-tree file when the index's stat data vouch for it as git
trusts them (``indexstat``), or when the file hashes to the blob id; another blob
from the work tree when its file hashes to it (AGENT.md), else a loose object
directly (`odb.loose`: never inflated past its declared size), a packed one from the
packs (`odb.packs`; else the object store, `odb.database`).

A HEAD whose tree holds one name twice (git fsck: duplicateEntries; git reads the
first entry, its index the last) shows in git's own output as a path named twice, and
is refused. The other trees git fsck refuses (a name '.git', '..', with '/') cannot
reach the commit being made: git's index refuses such paths, and git writes the
commit's trees from the index, sorted; check 4 and pre-receive refuse commits
holding them.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import threading
from collections.abc import Iterable
from typing import Protocol

from git_gasp.base.errors import GaspError
from git_gasp.base.fileops import open_regular
from git_gasp.base.files import open_file
from git_gasp.base.git import run
from git_gasp.guard.diffindex import diff_index, duplicate_entry
from git_gasp.odb.blobid import blob_id
from git_gasp.odb.gitdirs import GitDirs
from git_gasp.odb.indexstat import index_entry_stat, stat_proves

File = tuple[int, bytes]  # (mode, blob id)

class Warm(Protocol):
    """What the guard takes from the work begun before it loaded (``guard.warm``,
    which builds on this module: it never imports that one)."""

    def diff(self, index_path: str, target: str) -> list | None: ...

    def tree(self, commit: bytes) -> dict[bytes, File | None]: ...

    def log(self, path: bytes, worktree: str | None
            ) -> tuple[bytes, os.stat_result, int | None, bytes | None] | None: ...


_SMALL = 1 << 20  # a file not vouched for by the index is hashed only up to this size


class TreeFiles:
    """path -> (mode, id) of the files (not directories) of one commit, looked up on
    demand through ``git ls-tree`` (only the trees along each path are read); `prefetch`
    asks for several paths in one process."""

    def __init__(self, repo, commit: bytes) -> None:
        self.repo, self.commit = repo, commit
        self._found: dict[bytes, File | None] = {}

    def prefetch(self, paths: Iterable[bytes]) -> None:
        """Look up every path of `paths` not looked up yet, in one ``git ls-tree``."""
        wanted = sorted({p for p in paths if p not in self._found and p})
        if not wanted:
            return
        proc = run(self.repo.path, "--literal-pathspecs", "ls-tree", "-z", "--full-tree",
                   self.commit.decode(), "--", *map(os.fsdecode, wanted),
                   env={"GIT_DIR": os.path.abspath(self.repo.controldir())}, check=False)
        if proc.returncode != 0:
            detail = proc.stderr.decode(errors="replace").strip().splitlines()
            raise GaspError(f"cannot read the tree of {self.commit.decode()[:12]}: "
                            f"{detail[-1] if detail else 'git ls-tree failed'}")
        found: dict[bytes, File] = {}
        for record in proc.stdout.split(b"\x00"):
            if not record:
                continue
            match = _LS_TREE.fullmatch(record)
            if match is None:
                raise GaspError(f"cannot read git ls-tree's output: {record[:80]!r}")
            if match[4] in found:
                raise duplicate_entry(self.commit.decode(), match[4])
            found[match[4]] = (int(match[1], 8), match[3])
        for path in wanted:
            entry = found.get(path)
            self._found[path] = None if entry is None or stat.S_ISDIR(entry[0]) else entry

    def files_under(self, prefix: bytes) -> dict[bytes, File]:
        """Every file of the commit under the directory `prefix` (ending in ``/``), in
        one ``git ls-tree -r`` (few commits need it: those that touch identity/)."""
        proc = run(self.repo.path, "--literal-pathspecs", "ls-tree", "-r", "-z", "--full-tree",
                   self.commit.decode(), "--", os.fsdecode(prefix),
                   env={"GIT_DIR": os.path.abspath(self.repo.controldir())}, check=False)
        if proc.returncode != 0:
            raise GaspError(f"cannot read the tree of {self.commit.decode()[:12]}")
        files: dict[bytes, File] = {}
        for record in proc.stdout.split(b"\x00"):
            match = _LS_TREE.fullmatch(record) if record else None
            if match is not None and match[4].startswith(prefix):
                if match[4] in files:
                    raise duplicate_entry(self.commit.decode(), match[4])
                files[match[4]] = (int(match[1], 8), match[3])
        return files

    def get(self, path: bytes, default: File | None = None) -> File | None:
        if path not in self._found:
            self.prefetch([path])
        found = self._found.get(path)
        return default if found is None else found

    def __contains__(self, path: object) -> bool:
        return isinstance(path, bytes) and self.get(path) is not None

    def __getitem__(self, path: bytes) -> File:
        found = self.get(path)
        if found is None:
            raise KeyError(path)
        return found


_LS_TREE = re.compile(rb"(?s)([0-7]{6}) (\w+) ([0-9a-f]{40}|[0-9a-f]{64})\t(.*)")


class IndexFiles:
    """path -> (mode, id) of the index: the diff's entry where it names the path (None:
    not staged), else HEAD's."""

    def __init__(self, changed: dict[bytes, File | None], head: TreeFiles | dict) -> None:
        self.changed, self.head = changed, head

    def get(self, path: bytes, default: File | None = None) -> File | None:
        found = self.changed[path] if path in self.changed else self.head.get(path)
        return default if found is None else found

    def __contains__(self, path: object) -> bool:
        return isinstance(path, bytes) and self.get(path) is not None

    def __getitem__(self, path: bytes) -> File:
        found = self.get(path)
        if found is None:
            raise KeyError(path)
        return found


class StagedSides:
    """The index, HEAD and the merged parents of the commit being made.

    Built from the repository git gave the hook (a diff per side, trees on demand),
    or in memory (`_setup`, every side a dict: the runtime's own commits)."""

    def __init__(self, repo: GitDirs, index_path: str, warm: Warm | None = None) -> None:
        os.stat(index_path)  # FileNotFoundError: no index, nothing staged
        self.repo = repo
        head_sha = self._head()
        head: TreeFiles | dict = TreeFiles(repo, head_sha) if head_sha else {}
        if warm is not None and isinstance(head, TreeFiles):
            head._found.update(warm.tree(head_sha))
        target = head_sha.decode() if head_sha else empty_tree_id(repo)
        changed: dict[bytes, File | None] = {}
        conflicted: set[bytes] = set()
        rows = warm.diff(index_path, target) if warm is not None else None
        for path, old, new, status in rows if rows is not None else \
                diff_index(repo, index_path, target):
            changed[path] = new
            if status == b"U":
                conflicted.add(path)
            if isinstance(head, TreeFiles) and status != b"U":
                head._found[path] = old  # HEAD's entry, as the diff names it
        paths = set(changed)
        parents: list[TreeFiles | dict] = []
        for sha in self._merge_heads():
            parent = TreeFiles(repo, sha)
            parents.append(parent)
            # the paths the parent has and the index holds otherwise (as with dict sides)
            for p, old, _new, status in diff_index(repo, index_path, sha.decode()):
                if status != b"U":
                    parent._found[p] = old
                if old is not None:
                    paths.add(p)
        self._setup(repo, IndexFiles(changed, head), head, parents, conflicted, paths)
        self.worktree = repo.path
        self.index_path = index_path
        self.warm = warm
        self._staged_at = {new[1]: path for path, new in changed.items() if new is not None}

    def _setup(self, repo: GitDirs | None, index, head, parents: list,
               conflicted: set[bytes], changed: set[bytes] | None) -> None:
        """The sides (path -> File mappings) and what reads blobs; `changed`: the paths
        that differ, None to compute them from dict sides."""
        self.repo = repo  # type: ignore[assignment]
        self.index, self.head, self.parents = index, head, parents
        self.conflicted, self._changed = conflicted, changed
        self.worktree: str | None = None  # where a staged blob may be read from
        self.index_path: str | None = None  # the index whose stat data vouches for it
        self.warm: Warm | None = None  # work begun before the guard loaded
        self._staged_at: dict[bytes, bytes] = {}  # staged blob id -> its path
        self._worktree_at: dict[bytes, bytes] = {}  # other blob id -> a path it may be at
        self._blobs: dict[bytes, bytes] = {}
        self._prefix_ids: dict[tuple[bytes, int], bytes] = {}
        self._packs = None  # the mapped packs, when a blob is read from them

    @property
    def store(self):
        """The object store (opened only when a blob is not found otherwise)."""
        return None if self.repo is None else self.repo.object_store

    @property
    def odb(self):
        """`odb.database.ObjectDatabase` over `store`."""
        # the odb readers load when an object is read: 9 ms off a guarded commit that reads none
        from git_gasp.odb.database import ObjectDatabase

        return ObjectDatabase(self.store)

    def prefetch(self, paths: Iterable[bytes]) -> None:
        """Look up `paths` in HEAD and every merged parent at once (one process each)."""
        paths = list(paths)
        for side in (self.head, *self.parents):
            if isinstance(side, TreeFiles):
                side.prefetch(paths)

    # ---- reading git

    def _head(self) -> bytes | None:
        found = self.repo.head()
        if found:
            return found  # type: ignore[return-value]
        # unborn, or a layout the quick read does not know: git says which
        proc = run(self.repo.path, "rev-parse", "--verify", "-q", "HEAD^{commit}",
                   env={"GIT_DIR": os.path.abspath(self.repo.controldir())}, check=False)
        sha = proc.stdout.strip()
        return sha if proc.returncode == 0 and _HEX.fullmatch(sha.decode("ascii", "replace")) \
            else None  # unborn branch: the first commit

    def _merge_heads(self) -> list[bytes]:
        path = os.path.join(self.repo.controldir(), "MERGE_HEAD")
        try:
            with open_file(path) as f:
                heads = f.read().split()
        except FileNotFoundError:
            return merge_heads_from_env()
        except OSError as exc:
            raise GaspError(f"cannot read {path}: {exc}") from None
        for word in heads:
            if not _HEX.fullmatch(word.decode("ascii", "replace")):
                raise GaspError(f"{path} names {word[:40]!r}, not a commit id")
        return heads

    def _files_of_commit(self, sha: bytes | None) -> dict[bytes, File]:
        """Every file of commit `sha` (none for None): for sides built in memory."""
        from git_gasp.odb.objects import ObjectError

        if sha is None:
            return {}
        odb = self.odb
        if odb.kind(sha) is None:
            raise GaspError(f"commit {sha.decode()} is missing from the object store")
        try:
            return odb.files(odb.commit(sha).tree)
        except ObjectError as exc:
            raise GaspError(f"{sha.decode()}: {exc}") from None

    def changed_paths(self) -> set[bytes]:
        """Every path whose entry in the index differs from HEAD's, or from a merged
        parent's that has it, and every unmerged path."""
        if self._changed is not None:
            return set(self._changed) | self.conflicted
        index = self.index
        found = set(self.conflicted)
        for side in (self.head, *self.parents):
            found.update(p for p, f in side.items() if index.get(p) != f)
        found.update(p for p, f in index.items() if self.head.get(p) != f)
        return found

    def blob(self, sha: bytes, prefix: int | None = None) -> bytes:
        """The bytes of blob `sha`. `prefix`: the blob id of its first `prefix` bytes
        will be asked for (`prefix_id`); a work-tree read hashes it beside its own check."""
        data = self._blobs.get(sha)
        if data is None:
            data = self._worktree_blob(sha, prefix)
        if data is None:
            data = self._loose_blob(sha)
        if data is None:
            kind, data = self._stored(sha)
            if kind != "blob":
                raise GaspError(f"object {sha.decode()} is not a blob")
        self._blobs[sha] = data
        return data

    def _stored(self, sha: bytes) -> tuple[str, bytes]:
        """(type name, content) of `sha` from the object store; GaspError when missing."""
        from git_gasp.odb.objects import ObjectError

        if self.repo is not None:  # the packs read directly: no store opened
            got = self._packed(sha)
            if got is not None:
                return got
        try:
            return self.odb.raw(sha)
        except ObjectError as exc:
            if "missing" in str(exc):
                raise GaspError(f"blob {sha.decode()} is missing from the object store") from None
            raise GaspError(str(exc)) from None

    def _packed(self, sha: bytes) -> tuple[str, bytes] | None:
        """(type name, content) of `sha` from the repository's packs and loose files;
        None when it is not there (an alternate: the store reads it)."""
        from git_gasp.odb.objects import ObjectError
        from git_gasp.odb.packs import PackFiles

        packs = self._packs
        if packs is None:
            packs = self._packs = PackFiles.for_objects_dir(self.repo.objects_dir())
        try:
            got = packs.read(sha)
        except ObjectError as exc:
            raise GaspError(str(exc)) from None
        if got is None:
            return None
        return {1: "commit", 2: "tree", 3: "blob", 4: "tag"}.get(got[0], "?"), got[1]

    def prefix_id(self, sha: bytes, length: int) -> bytes:
        """The (sha1) git blob id of the first `length` bytes of blob `sha`."""
        found = self._prefix_ids.get((sha, length))
        if found is None:
            found = self._prefix_ids[sha, length] = blob_id(memoryview(self.blob(sha))[:length])
        return found

    def _worktree_blob(self, sha: bytes, prefix: int | None) -> bytes | None:
        """A blob's bytes from the work-tree file of a path that holds it, when that is
        proved (reading a file costs less than inflating the object): a staged file by
        the index's stat data as git proves it (`indexstat`), else by hashing it to the
        blob id. `prefix`: hash the first `prefix` bytes too (`prefix_id`) in the same
        read, on another core when the whole file must be hashed as well."""
        path = self._staged_at.get(sha)
        staged = path is not None
        if path is None:
            path = self._worktree_at.get(sha)
        if path is None or self.worktree is None or len(sha) not in (40, 64):
            return None
        vouched = index_entry_stat(self.index_path, path, sha) \
            if staged and self.index_path else None
        size = None if vouched is not None else self._loose_size(sha) if staged else None
        early = self.warm.log(path, self.worktree) if self.warm and vouched else None
        if early is not None and vouched is not None:
            data, after, length, early_id = early
            if len(data) == after.st_size and stat_proves(vouched, after):
                if prefix is not None and prefix <= len(data):
                    self._prefix_ids[sha, prefix] = early_id if length == prefix and early_id \
                        else blob_id(memoryview(data)[:prefix])
                return data
        full = os.path.join(self.worktree, os.fsdecode(path))
        try:
            fd = open_regular(full)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or (size is not None and st.st_size != size) \
                    or (vouched is None and size is None and st.st_size > _SMALL):
                return None
            with os.fdopen(os.dup(fd), "rb") as f:
                data = f.read()
            after = os.fstat(fd)
        except OSError:
            return None
        finally:
            os.close(fd)
        if vouched is not None and len(data) == after.st_size and stat_proves(vouched, after):
            if prefix is not None and prefix <= len(data):
                self._prefix_ids[sha, prefix] = blob_id(memoryview(data)[:prefix])
            return data
        ids: list[bytes] = []
        worker = None
        if prefix is not None and prefix <= len(data):  # hashlib lets go of the GIL
            worker = threading.Thread(
                target=lambda: ids.append(blob_id(memoryview(data)[:prefix])))
            worker.start()
        whole = blob_id(data)
        if worker is not None:
            worker.join()
        if whole != sha:
            return None
        if ids:
            self._prefix_ids[sha, prefix] = ids[0]
        return data

    def _loose_path(self, sha: bytes) -> str | None:
        root = self.repo.objects_dir() if self.repo is not None else \
            getattr(self.store, "path", None)
        if not isinstance(root, str) or len(sha) not in (40, 64):
            return None
        return os.path.join(root, sha[:2].decode(), sha[2:].decode())

    def _loose_size(self, sha: bytes) -> int | None:
        """The size a loose object's header states (None: not loose, or not a blob)."""
        path = self._loose_path(sha)
        if path is None:
            return None
        from git_gasp.odb.loose import ObjectRefused, peek

        try:
            type_num, size, _ = peek(path, f"blob {sha.decode()}")
        except (OSError, ObjectRefused):
            return None
        return size if type_num == 3 else None

    def _loose_blob(self, sha: bytes) -> bytes | None:
        """A loose blob's bytes read directly (the object store's reader copies them
        several times); None for anything else (packed, alternates, odd): the store
        reads it."""
        path = self._loose_path(sha)
        if path is None:
            return None
        from git_gasp.odb.loose import ObjectRefused, read_loose

        try:  # never more than the header declares (a zlib bomb is refused)
            got = read_loose(path, f"blob {sha.decode()}")
        except OSError:
            return None
        except ObjectRefused as exc:
            raise GaspError(str(exc)) from None
        return got[1] if got is not None and got[0] == 3 else None


def empty_tree_id(repo: GitDirs) -> str:
    """The id of the empty tree in the repository's object format."""
    from git_gasp.odb.repo import object_format

    algo = hashlib.sha256 if object_format(repo) == b"sha256" else hashlib.sha1
    return algo(b"tree 0\x00").hexdigest()


def index_file(repo: GitDirs) -> str:
    """The index git wants checked: GIT_INDEX_FILE (relative to the cwd) or the repo's."""
    env = os.environ.get("GIT_INDEX_FILE")
    return os.path.abspath(env) if env else repo.index_path()


def merge_heads_from_env() -> list[bytes]:
    """The commits a running `git merge` merges, from the ``GITHEAD_<id>`` variables it
    sets for its hooks: git runs pre-merge-commit before it writes MERGE_HEAD."""
    heads = {name[len("GITHEAD_"):].lower() for name in os.environ if name.startswith("GITHEAD_")}
    return sorted(h.encode() for h in heads if _HEX.fullmatch(h))


_HEX = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
