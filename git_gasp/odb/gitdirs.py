"""Where a repository lives, found without dulwich (the guard's and the check's hot paths).

`locate` finds the repository as the dulwich-based ``store.gitrepo.open_repo`` does,
for the plain layouts: ``GIT_DIR`` (with ``GIT_WORK_TREE``, else the current directory, as
the work tree: what git sets for a linked worktree's hooks), else walking up to a
``.git`` directory, or a ``.git`` file naming a linked worktree's git dir; the common
dir from its ``commondir`` file. HEAD is read from the loose ref or ``packed-refs``.
Anything else (other ``GIT_*`` locations set, a bare repository, a ``core.worktree``
or ``core.bare`` setting, a ref it cannot read) returns None or defers to git or
dulwich, so the answer is never a guess. The object store (dulwich) opens
only when a blob must be read from a pack.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from git_gasp.base.digest import is_object_id
from git_gasp.base.files import open_file

_OTHER_ENV = ("GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
              "GIT_NAMESPACE")
_SPACE = b" \t\n\r\f\v"


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
    """A work tree's top, its git dir and common dir, and its object store (a lazy
    dulwich ``DiskObjectStore``): the repository type of the plain layouts, with the
    parts of a dulwich ``Repo`` the guard and check 4 use; a ``Repo`` opens only when
    asked for (`dulwich`)."""

    def __init__(self, path: str, controldir: str, commondir: str, repo=None) -> None:
        self.path, self._controldir, self._commondir = path, controldir, commondir
        self._repo = repo
        self._store = None

    @classmethod
    def of(cls, repo) -> GitDirs:
        """The dirs of an open dulwich ``Repo`` (which serves the object store)."""
        return cls(repo.path, repo.controldir(), repo.commondir(), repo)

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
            from dulwich.repo import Repo

            self._repo = Repo(self.path, controldir=self._controldir, worktree=self.path)
        return self._repo

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


def locate(cwd: str) -> GitDirs | None:
    """The repository around `cwd` in the plain layouts (see the module docstring), or
    None: let dulwich decide (and raise what it raises)."""
    if any(os.environ.get(name) for name in _OTHER_ENV):
        return None
    start = os.path.realpath(cwd)
    git_dir = os.environ.get("GIT_DIR")
    try:
        if git_dir:  # as git sets it for a linked worktree's hooks
            here = os.path.realpath(os.environ.get("GIT_WORK_TREE") or os.getcwd())
            controldir = git_dir
            if not os.path.isdir(controldir) or not Path(start).is_relative_to(here):
                return None
        elif os.environ.get("GIT_WORK_TREE"):
            return None
        else:
            found = _discover(start)
            if found is None:
                return None
            here, controldir = found
        controldir = os.path.realpath(controldir)
        commondir = controldir
        named = _read(os.path.join(controldir, "commondir"))
        if named is not None:
            commondir = os.path.realpath(os.path.join(controldir, os.fsdecode(named.strip())))
        for config in (os.path.join(commondir, "config"),
                       os.path.join(controldir, "config.worktree")):
            text = _read_all(config)
            if text is not None and _odd_config(text):
                return None
    except OSError:
        return None
    if Path(start).is_relative_to(controldir):
        return None
    return GitDirs(here, controldir, commondir)


def _odd_config(text: bytes) -> bool:
    """True when a config names a work tree (``core.worktree``) or says the repository
    is bare (a true ``core.bare``), or cannot be read for sure here (an include, a
    continued line): then dulwich or git decides. Read as git reads it, never by
    looking for a word ("worktree" in a branch name is not a work tree)."""
    entries = config_entries(text)
    if entries is None:
        return True
    for section, sub, key, value in entries:
        if section == b"core" and sub is None and (
                key == b"worktree" or key == b"bare" and (value is None or value.lower() in (
                    b"true", b"yes", b"on", b"1"))):
            return True
    return False


def _discover(start: str) -> tuple[str, str] | None:
    """(work tree top, git dir) found walking up from `start`, as dulwich does."""
    here = start
    while True:
        dotgit = os.path.join(here, ".git")
        if os.path.isfile(dotgit):
            raw = _read(dotgit) or b""
            if not raw.startswith(b"gitdir: "):
                return None
            return here, os.path.join(here, os.fsdecode(raw[8:].strip()))
        if os.path.isdir(os.path.join(dotgit, "objects")):
            return here, dotgit
        if os.path.isdir(os.path.join(here, "objects")) and \
                os.path.isdir(os.path.join(here, "refs")):
            return None  # a bare repository or inside a git dir
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


_SECTION = re.compile(rb'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\\n]|\\.)*)")?\s*\]\s*(.*)$')
_KEY = re.compile(rb"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(=|$|[;#])")
_BLANK = re.compile(rb"^\s*([;#].*)?$")
_INCLUDES = (b"include", b"includeif")


def config_entries(text: bytes) -> list[tuple[bytes, bytes | None, bytes, bytes | None]] | None:
    """The (section, subsection, key, value) entries of one git config file, in order:
    section and key lower-cased, the value unquoted (None for a bare key); None when this
    cannot be sure of what git reads (an ``include``/``includeIf`` section, a line
    continued with a backslash, a line it cannot parse): ask git then."""
    entries: list[tuple[bytes, bytes | None, bytes, bytes | None]] = []
    current: tuple[bytes, bytes | None] | None = None
    for line in text.splitlines():
        if line.rstrip(_SPACE).endswith(b"\\"):
            return None
        head = _SECTION.match(line)
        if head is not None:
            name, sub = head.group(1).lower(), head.group(2)
            if sub is None and b"." in name:  # the old [section.subsection] form
                name, _, low = name.partition(b".")
                sub = low
            if name in _INCLUDES:
                return None
            current = (name, sub.replace(b'\\"', b'"').replace(b"\\\\", b"\\")
                       if sub is not None else None)
            line = head.group(3)
        got = _KEY.match(line)
        if got is None:
            if _BLANK.match(line) is None:
                return None
            continue
        if current is None:
            return None
        rest = line[got.end(1):]
        value = None if not rest.lstrip(_SPACE).startswith(b"=") else _value(rest)
        entries.append((*current, got.group(1).lower(), value))
    return entries


def local_config_sets(cwd: str, section: str, subsection: str, key: str) -> bool:
    """True when this repository's own config file (or its worktree config) sets
    ``section.subsection.key`` to some value, read without git; False means "not seen
    here", never "unset" (other scopes and includes are git's to answer)."""
    return local_config_value(cwd, section, subsection, key) is not None


class Unsure(Exception):
    """The repository's own config cannot be read for sure without git."""


def repository_config_value(cwd: str, section: str, subsection: str | None, key: str
                            ) -> bytes | None:
    """The last value the repository's own config gives ``section[.subsection].key``, read
    as git reads its local and worktree scopes, without running git (b"" for a bare key;
    None: not set); raises `Unsure` when only git can tell (no plain layout, an include,
    a worktree config, a line this reader does not know)."""
    dirs = locate(cwd)
    if dirs is None:
        raise Unsure(cwd)
    if _read_all(os.path.join(dirs.controldir(), "config.worktree")) is not None:
        raise Unsure(cwd)
    text = _read_all(os.path.join(dirs.commondir(), "config"))
    entries = config_entries(text or b"")
    if entries is None:
        raise Unsure(cwd)
    want = (section.lower().encode(), None if subsection is None else subsection.encode())
    found: bytes | None = None
    for name, sub, got, value in entries:
        if (name, sub) == want and got == key.lower().encode():
            found = b"" if value is None else value
    return found


def local_config_value(cwd: str, section: str, subsection: str | None, key: str
                       ) -> bytes | None:
    """`repository_config_value`, with None for "not seen here" when only git could
    tell (callers that then ask git, or do without)."""
    try:
        return repository_config_value(cwd, section, subsection, key)
    except Unsure:
        return None


def _value(rest: bytes) -> bytes:
    """The value after a key: ``= value``, as git's config parser reads it: whitespace
    outside quotes dropped at either end and kept (as spaces) inside, whitespace inside
    quotes kept whatever its place (``"st "`` ends in a space), ``\\n`` ``\\t``
    ``\\b`` ``\\\\`` ``\\"`` unescaped, a comment cut."""
    rest = rest.lstrip(_SPACE)
    if not rest.startswith(b"="):
        return b""
    rest = rest[1:]
    out, quoted, space, i = bytearray(), False, 0, 0
    while i < len(rest):
        c = rest[i:i + 1]
        i += 1
        if not quoted and c in _SPACE:
            space += 1 if out else 0
            continue
        if not quoted and c in (b"#", b";"):
            break
        out += b" " * space
        space = 0
        if c == b"\\" and i < len(rest):
            nxt = rest[i:i + 1]
            out += {b"n": b"\n", b"t": b"\t", b"b": b"\b"}.get(nxt, nxt)
            i += 1
        elif c == b'"':
            quoted = not quoted
        else:
            out += c
    return bytes(out)
