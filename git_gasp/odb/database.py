"""`ObjectDatabase`: typed reads of one object store for the layers above odb (commits,
trees as path -> (mode, id), blobs, raw objects, tags peeled), by the process's
dulwich; and opening a store: a repository's objects directory,
or a push's quarantine in front of it (the server hook's overlay)."""

from __future__ import annotations

import stat
from typing import TYPE_CHECKING

from git_gasp.odb.objects import CommitInfo, ObjectError, commit_info, parse_tree

if TYPE_CHECKING:  # dulwich's types: dulwich loads only where objects are read
    from git_gasp.odb.repo import BaseObjectStore

File = tuple[int, bytes]  # (mode, object id)
_TYPES = {1: "commit", 2: "tree", 3: "blob", 4: "tag"}


class ObjectDatabase:
    """Reads (and, through `odb.write`, writes) the objects of one store."""

    def __init__(self, store: BaseObjectStore) -> None:
        self.store = store

    @classmethod
    def open(cls, objects_dir: str, quarantine: str | None = None) -> ObjectDatabase:
        """The objects under `objects_dir`, with `quarantine` (a push's not yet accepted
        objects: ``GIT_QUARANTINE_PATH``) read first when given."""
        from dulwich.object_store import DiskObjectStore, OverlayObjectStore

        main = DiskObjectStore(objects_dir)
        if quarantine is None:
            return cls(main)
        return cls(OverlayObjectStore([DiskObjectStore(quarantine), main]))

    @property
    def path(self) -> str | None:
        """The objects directory, for a store on disk."""
        path = getattr(self.store, "path", None)
        return path if isinstance(path, str) else None

    def close(self) -> None:
        close = getattr(self.store, "close", None)
        if close is not None:
            close()

    def __enter__(self) -> ObjectDatabase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __contains__(self, sha: bytes) -> bool:
        return sha in self.store

    def raw(self, sha: bytes) -> tuple[str, bytes]:
        """(type name, content) of object `sha`; ObjectError when missing or unreadable."""
        try:
            type_num, data = self.store.get_raw(sha)
        except KeyError:
            raise ObjectError(f"object {sha.decode()} is missing") from None
        except Exception as exc:  # noqa: BLE001 - corrupt data, many exception types
            raise ObjectError(f"object {sha.decode()} is unreadable ({exc})") from None
        return _TYPES.get(type_num, str(type_num)), data

    def _typed(self, sha: bytes, kind: str) -> bytes:
        found, data = self.raw(sha)
        if found != kind:
            raise ObjectError(f"object {sha.decode()} is a {found}, expected a {kind}")
        return data

    def kind(self, sha: bytes) -> str | None:
        """The type name of `sha`, None when it is missing or unreadable."""
        try:
            return self.raw(sha)[0]
        except ObjectError:
            return None

    def commit(self, sha: bytes) -> CommitInfo:
        data = self._typed(sha, "commit")
        try:
            return commit_info(data)
        except ValueError as exc:
            raise ObjectError(f"commit {sha.decode()} is unreadable ({exc})") from None

    def tree(self, sha: bytes) -> dict[bytes, File]:
        """The entries of tree `sha`: name -> (mode, id)."""
        data = self._typed(sha, "tree")
        try:
            return {name: (e.mode, e.sha) for name, e in parse_tree(data).items()}
        except Exception as exc:  # noqa: BLE001 - dulwich's parser raises several types
            raise ObjectError(f"tree {sha.decode()} is unreadable ({exc})") from None

    def blob(self, sha: bytes) -> bytes:
        return self._typed(sha, "blob")

    def files(self, tree_sha: bytes) -> dict[bytes, File]:
        """Every non-tree entry below tree `tree_sha`, by its full ``/``-separated path."""
        found: dict[bytes, File] = {}
        stack = [(b"", tree_sha)]
        while stack:
            base, sha = stack.pop()
            for name, (mode, oid) in self.tree(sha).items():
                path = base + b"/" + name if base else name
                if stat.S_ISDIR(mode):
                    stack.append((path, oid))
                else:
                    found[path] = (mode, oid)
        return found

    def lookup(self, tree_sha: bytes, path: bytes) -> File:
        """The entry at `path` below tree `tree_sha`; KeyError when there is none."""
        mode, sha = stat.S_IFDIR, tree_sha
        for part in path.split(b"/"):
            if not stat.S_ISDIR(mode):
                raise KeyError(path)
            mode, sha = self.tree(sha)[part]
        return mode, sha

    def peel(self, sha: bytes) -> bytes | None:
        """The commit `sha` names, through annotated tags; None for a tree or blob; `sha`
        itself when it cannot be read (the reader of the commit reports it)."""
        for _ in range(64):  # a tag of a tag of ...
            try:
                kind, data = self.raw(sha)
            except ObjectError:
                return sha
            if kind == "tag":
                first = data.split(b"\n", 1)[0]
                if not first.startswith(b"object "):
                    return sha
                sha = first[7:]
                continue
            return sha if kind == "commit" else None
        return None
