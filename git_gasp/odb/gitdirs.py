"""Where a repository lives, opened without dulwich (the guard's and the check's hot paths).

`locate` takes the repository `base.gitdir.discover` finds, honouring the caller's
``GIT_DIR``, ``GIT_WORK_TREE`` and ``GIT_COMMON_DIR`` (what git sets for a hook), when
it has a work tree around the start; when the config may move that work tree
(``core.worktree``, ``core.bare``: git's to read) its top is git's (one ``git rev-parse
--show-toplevel``). Anything else (other ``GIT_*`` locations set, a bare repository, a
ref it cannot read) returns None or defers to git or dulwich, so the answer is never a
guess. HEAD is read from the loose ref or ``packed-refs``. The
object store (dulwich) opens only when a blob must be read from a pack.
"""

from __future__ import annotations

import os
from pathlib import Path

from git_gasp.base import git
from git_gasp.base.digest import is_object_id
from git_gasp.base.errors import GaspError
from git_gasp.base.files import open_file
from git_gasp.base.gitdir import GitDir, discover

_OTHER_ENV = ("GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE")


class LazyDiskStore:
    """A dulwich ``DiskObjectStore`` over the objects directory `path`, made (and dulwich
    imported) on its first use: check 4 reads most objects raw from `path` and may never
    need it."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._store = None

    @property
    def store(self):
        """The dulwich store itself."""
        if self._store is None:
            from dulwich.object_store import DiskObjectStore

            self._store = DiskObjectStore(self.path)
        return self._store

    def __getitem__(self, sha: bytes):
        return self.store[sha]

    def __contains__(self, sha: bytes) -> bool:
        return sha in self.store

    def __getattr__(self, name: str):
        return getattr(self.store, name)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()


class GitDirs:
    """The one repository type: a work tree's top (`path`), its git dir and common dir,
    and its object store (a lazy dulwich ``DiskObjectStore``, or the open ``Repo``'s);
    HEAD and refs read from their files. The few jobs that need dulwich's ``Repo`` (the
    index, porcelain) get it from `dulwich`, opened on first use over these same dirs,
    so the repository is found once (`locate`, `odb.repo.open_repo`)."""

    def __init__(self, path: str, controldir: str, commondir: str, repo=None) -> None:
        self.path, self._controldir, self._commondir = path, controldir, commondir
        self._repo = repo
        self._store = None

    def controldir(self) -> str:
        return self._controldir

    def commondir(self) -> str:
        return self._commondir

    def index_path(self) -> str:
        return os.path.join(self._controldir, "index")

    def objects_dir(self) -> str:
        return os.path.join(self._commondir, "objects")

    def dulwich(self):
        """The dulwich ``Repo`` (opened on first use)."""
        if self._repo is None:
            self._repo = dulwich_repo(self.path, self._controldir, self._commondir)
        return self._repo

    def open_index(self):
        """The index, as dulwich reads it (`dulwich`)."""
        return self.dulwich().open_index()

    def head_commit(self) -> bytes | None:
        """HEAD's commit id, None on an unborn branch: `head`, and dulwich's refs when
        the files cannot tell."""
        head = self.head()
        if head is not False:
            return head  # type: ignore[return-value]
        try:
            return self.dulwich().refs[b"HEAD"]
        except KeyError:
            return None

    @property
    def object_store(self):
        """The open ``Repo``'s store, else a `LazyDiskStore` over the objects
        directory (dulwich imported on its first use)."""
        if self._repo is not None:
            return self._repo.object_store
        if self._store is None:
            self._store = LazyDiskStore(self.objects_dir())
        return self._store

    def get_named_file(self, name: str, basedir: str | None = None):
        """The open file `name` under `basedir` (default: the git dir), None if none."""
        try:
            return open_file(os.path.join(basedir or self._controldir, name))
        except (FileNotFoundError, NotADirectoryError):
            return None

    def head(self) -> bytes | None | bool:
        """HEAD's commit id; None when the branch it names has no commit (unborn);
        False when this cannot tell (ask git or dulwich)."""
        return _resolve(self._controldir, self._commondir, b"HEAD")

    def ref(self, name: bytes) -> bytes | None | bool:
        """The commit id the ref `name` (``refs/…``) holds; None when there is no such
        ref; False when this cannot tell (a reftable repository, an odd ref: ask git)."""
        if os.path.exists(os.path.join(self._commondir, "reftable")):
            return False
        return _resolve(self._controldir, self._commondir, name)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
        if self._repo is not None:
            self._repo.close()

    def __enter__(self) -> GitDirs:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def dulwich_repo(top: str, controldir: str, commondir: str):
    """A dulwich ``Repo`` over dirs already found (`base.gitdir.discover`): dulwich is
    never asked to find them itself."""
    from dulwich.repo import Repo

    return Repo(top, controldir=controldir, commondir=commondir, worktree=top)


def _read(path: str) -> bytes | None:
    try:
        with open_file(path) as f:
            return f.read(4096)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _resolve(controldir: str, commondir: str, name: bytes, depth: int = 0) -> bytes | None | bool:
    """The commit id ref `name` holds (following symbolic refs); None: no such ref."""
    if depth > 5 or b".." in name or name.startswith(b"/"):
        return False
    try:
        base = controldir if name == b"HEAD" or name.startswith(
            (b"refs/worktree/", b"refs/bisect/", b"refs/rewritten/")) else commondir
        raw = _read(os.path.join(base, os.fsdecode(name)))
        if raw is None:
            return _packed(commondir, name)
    except OSError:
        return False
    raw = raw.strip()
    if is_object_id(raw):
        return raw
    if raw.startswith(b"ref: "):
        target = raw[5:].strip()
        if not target.startswith(b"refs/"):
            return False
        return _resolve(controldir, commondir, target, depth + 1)
    return False


def _packed(commondir: str, name: bytes) -> bytes | None | bool:
    try:
        raw = _read_all(os.path.join(commondir, "packed-refs"))
    except OSError:
        return False
    if raw is None:
        return None
    for line in raw.split(b"\n"):
        if line.endswith(b" " + name) and not line.startswith((b"#", b"^")):
            sha = line[:-len(name) - 1]
            return sha if is_object_id(sha) else False
    return None


def _read_all(path: str) -> bytes | None:
    try:
        with open_file(path) as f:
            return f.read()
    except FileNotFoundError:
        return None


def locate(cwd: str, *, any_env: bool = False) -> GitDirs | None:
    """The repository around `cwd` (see the module docstring), or None: not in a work
    tree, or (unless `any_env`) another object store named in the environment, which
    the callers leave to git."""
    if not any_env and any(os.environ.get(name) for name in _OTHER_ENV):
        return None
    start = os.path.realpath(cwd)
    found = discover(start, inherit_git_env=True)
    if found is None or found.top is None:
        return None
    top: str | None = found.top
    if _config_may_move(found):
        top = _git_top(found.top)
    if top is None or not Path(start).is_relative_to(top) \
            or Path(start).is_relative_to(found.path):
        return None
    return GitDirs(top, found.path, found.common)


def _git_top(where: str) -> str | None:
    """The work tree's top as git says it from `where` (``core.worktree``, ``core.bare``
    read), None when it says there is none."""
    try:
        said = git.run(where, "rev-parse", "--show-toplevel", check=False,
                       inherit_git_env=True)
    except GaspError:
        return None
    text = os.fsdecode(said.stdout.rstrip(b"\n"))
    return os.path.realpath(text) if said.returncode == 0 and text else None


_MAY_MOVE = (b"bare", b"worktree", b"include")


def _config_may_move(found: GitDir) -> bool:
    """False only when the repository's config files cannot set ``core.worktree`` or a
    true ``core.bare``: none of their words is in them, once the line ``bare = false``
    git writes is set aside (a key is never escaped nor continued). True: ask git."""
    try:
        for path in (os.path.join(found.common, "config"),
                     os.path.join(found.path, "config.worktree")):
            text = _read_all(path)
            if text is not None and any(word in text.replace(b"\n\tbare = false\n", b"\n")
                                        .lower() for word in _MAY_MOVE):
                return True
    except OSError:
        return True
    return False
