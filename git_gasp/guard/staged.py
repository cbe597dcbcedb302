"""What the guard compares: the index (``GIT_INDEX_FILE`` when git sets it), HEAD
and every merged parent as path -> (mode, blob id), and the blobs' bytes.

Everything is read through dulwich from the repository git gave the hook (its
``GIT_DIR`` / ``GIT_INDEX_FILE``); no git process is started.
"""

from __future__ import annotations

import os
import re
import zlib

from dulwich.index import ConflictedIndexEntry, Index
from dulwich.objects import Blob, Commit
from dulwich.repo import Repo

from git_gasp.base.errors import GaspError

File = tuple[int, bytes]  # (mode, blob id)


class StagedSides:
    """The index, HEAD and the merged parents of the commit being made."""

    def __init__(self, repo: Repo, index_path: str) -> None:
        self.repo = repo
        self.store = repo.object_store
        self.index: dict[bytes, File] = {}
        self.conflicted: set[bytes] = set()
        for path, entry in Index(index_path).items():
            if isinstance(entry, ConflictedIndexEntry):
                self.conflicted.add(path)
            else:
                self.index[path] = (entry.mode, entry.sha)
        self.head = self._files_of_commit(self._head())
        self.parents = [self._files_of_commit(sha) for sha in self._merge_heads()]
        self._blobs: dict[bytes, bytes] = {}

    # ---- reading git

    def _head(self) -> bytes | None:
        try:
            return self.repo.refs[b"HEAD"]
        except KeyError:
            return None  # unborn branch: the first commit

    def _merge_heads(self) -> list[bytes]:
        path = os.path.join(self.repo.controldir(), "MERGE_HEAD")
        try:
            with open(path, "rb") as f:
                return [w for w in f.read().split() if w]
        except FileNotFoundError:
            return merge_heads_from_env()
        except OSError as exc:
            raise GaspError(f"cannot read {path}: {exc}") from None

    def _files_of_commit(self, sha: bytes | None) -> dict[bytes, File]:
        if sha is None:
            return {}
        try:
            commit = self.store[sha]
            if not isinstance(commit, Commit):
                raise GaspError(f"{sha.decode()} is not a commit")
            return {e.path: (e.mode, e.sha) for e in self.store.iter_tree_contents(commit.tree)}
        except KeyError:
            raise GaspError(f"commit {sha.decode()} is missing from the object store") from None

    def blob(self, sha: bytes) -> bytes:
        data = self._blobs.get(sha)
        if data is None:
            data = self._loose_blob(sha)
        if data is None:
            try:
                obj = self.store[sha]
            except KeyError:
                raise GaspError(f"blob {sha.decode()} is missing from the object store") from None
            if not isinstance(obj, Blob):
                raise GaspError(f"object {sha.decode()} is not a blob")
            data = obj.as_raw_string()
        self._blobs[sha] = data
        return data

    def _loose_blob(self, sha: bytes) -> bytes | None:
        """A loose blob's bytes read directly (dulwich's reader copies them several
        times); None for anything else (packed, alternates, odd): dulwich reads it."""
        root = getattr(self.store, "path", None)
        if not isinstance(root, str) or len(sha) not in (40, 64):
            return None
        path = os.path.join(root, sha[:2].decode(), sha[2:].decode())
        try:
            with open(path, "rb") as f:
                raw = f.read()
            head = zlib.decompressobj().decompress(raw, 32)  # "blob <size>\0": presize
            size = len(head) + int(head[5:head.index(b"\x00")]) if b"\x00" in head else 0
            data = zlib.decompress(raw, bufsize=max(size, zlib.DEF_BUF_SIZE))
        except (OSError, zlib.error, ValueError):
            return None
        nul = data.find(b"\x00", 0, 32)
        if nul < 0 or data[:nul] != b"blob %d" % (len(data) - nul - 1):
            return None
        return data[nul + 1:]


def index_file(repo: Repo) -> str:
    """The index git wants checked: GIT_INDEX_FILE (relative to the cwd) or the repo's."""
    env = os.environ.get("GIT_INDEX_FILE")
    return os.path.abspath(env) if env else repo.index_path()


def merge_heads_from_env() -> list[bytes]:
    """The commits a running `git merge` merges, from the ``GITHEAD_<id>`` variables it
    sets for its hooks: git runs pre-merge-commit before it writes MERGE_HEAD."""
    heads = {name[len("GITHEAD_"):].lower() for name in os.environ if name.startswith("GITHEAD_")}
    return sorted(h.encode() for h in heads if _HEX.fullmatch(h))


_HEX = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


