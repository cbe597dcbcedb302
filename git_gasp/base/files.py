"""The one way a file is replaced, and the one file lock.

`AtomicFile` (and its shorthand `atomic_write`) writes a temporary file beside the
target, fsyncs it, renames it over the target and, where the target is new, fsyncs
the directory; on any failure, or on `abort()`, the temporary file is removed and
the target is left as it was. An existing file keeps its mode. It never writes
through a symbolic link: not at the target, and not in any directory between `root`
(the repository) and the target; a user config file that is a link is written at
its target only when the caller names where that target may lie
(`link_targets_within`). Model: dulwich's ``GitFile``.

`file_lock` is an exclusive ``flock`` with a timeout, raising `FileLocked`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import TracebackType

from git_gasp.base.errors import GaspError


class UnsafePath(GaspError):
    """A write would go through a symbolic link, or outside the place it belongs."""


class FileLocked(GaspError):
    """Another process holds the lock and did not let go within the timeout."""


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def refuse_links(path: Path | str, root: Path | str | None = None) -> Path:
    """Raise UnsafePath when `path`, or a directory from `root` down to it, is a link.

    With `root`, `path` must also lie inside it. Returns `path` as an absolute Path
    (not resolved: the point is that nothing on the way needed resolving).
    """
    target = Path(os.path.abspath(path))
    if root is None:
        parts = [target]
    else:
        base = Path(os.path.abspath(root))
        if not _inside(target, base):
            raise UnsafePath(f"{target}: outside {base}; refusing to write there")
        rel = target.relative_to(base).parts
        parts = [base.joinpath(*rel[: i + 1]) for i in range(len(rel))]
    for part in parts:
        if part.is_symlink():
            what = "is a symbolic link" if part == target else f"lies under a link ({part})"
            raise UnsafePath(f"{target}: {what}; refusing to write through it")
    return target


def link_target(path: Path | str, allowed: Sequence[Path | str]) -> Path:
    """Where a write to the link `path` should land: its resolved target, which must
    lie inside one of `allowed` (raises UnsafePath otherwise)."""
    real = Path(os.path.realpath(path))
    for place in allowed:
        if _inside(real, Path(os.path.realpath(place))):
            return real
    raise UnsafePath(f"{path}: a link to {real}, outside "
                     + " and ".join(str(p) for p in allowed) + "; refusing to write through it")


def fsync_dir(directory: Path | str) -> None:
    """fsync a directory so a new entry in it survives a crash (best effort)."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class AtomicFile:
    """A binary file open for writing that replaces `path` on `close()`, or not at all.

    `root`: the repository (or other tree) the target lives in; no directory from it
    down may be a link. `link_targets_within`: when the target itself is a link, write
    at its resolved target if that lies inside one of these directories (the link is
    kept); with none given, a link is refused. `mode`: for a new file (default
    0o666 less the umask); an existing file keeps its own. `durable=False` skips the
    fsyncs, for caches that are rebuilt when lost.
    """

    def __init__(self, path: Path | str, *, root: Path | str | None = None,
                 link_targets_within: Sequence[Path | str] = (), mode: int | None = None,
                 durable: bool = True, make_parents: bool = False) -> None:
        target = Path(os.path.abspath(path))
        if link_targets_within and target.is_symlink():
            if root is not None:
                refuse_links(target.parent, root)
            target = link_target(target, link_targets_within)
        else:
            refuse_links(target, root)
        if make_parents:
            target.parent.mkdir(parents=True, exist_ok=True)
            refuse_links(target, root)
        self.path = target
        self._durable = durable
        try:
            self._old_mode: int | None = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            self._old_mode = None
        self._tmp = target.with_name(f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(self._tmp, flags, 0o666 if mode is None else mode)
        self._file = os.fdopen(fd, "wb")
        self.closed = False

    def write(self, data: bytes) -> int:
        return self._file.write(data)

    def abort(self) -> None:
        """Drop what was written; the target is untouched."""
        if self.closed:
            return
        self.closed = True
        with contextlib.suppress(OSError):
            self._file.close()
        with contextlib.suppress(OSError):
            os.unlink(self._tmp)

    def close(self) -> None:
        """Make the written bytes the target's content (atomically)."""
        if self.closed:
            return
        try:
            self._file.flush()
            if self._old_mode is not None:
                os.fchmod(self._file.fileno(), self._old_mode)
            if self._durable:
                os.fsync(self._file.fileno())
            self._file.close()
            os.replace(self._tmp, self.path)
        except BaseException:
            self.abort()
            raise
        self.closed = True
        if self._durable and self._old_mode is None:
            fsync_dir(self.path.parent)

    def __enter__(self) -> AtomicFile:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def atomic_write(path: Path | str, data: bytes, **options) -> Path:
    """Replace `path` with `data` atomically (options as for `AtomicFile`); returns
    the path written (a link's target when `link_targets_within` allowed it)."""
    with AtomicFile(path, **options) as fh:
        fh.write(data)
    return fh.path


def move_into_place(src: Path | str, dest: Path | str, *, root: Path | str | None = None) -> None:
    """Rename the finished file or directory `src` to `dest` (same filesystem), refusing
    a link at `dest` or on the way to it."""
    refuse_links(dest, root)
    os.replace(src, dest)


@contextlib.contextmanager
def held_lock(path: Path | str, wait_s: float, *,
              poll_s: float = 0.02) -> Iterator[int | None]:
    """Hold an exclusive flock on `path` (created 0o600 if missing); yields its open
    descriptor (a child that inherits it holds the lock too), or None, holding
    nothing, when it could not be had within `wait_s` seconds."""
    import fcntl

    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise
                if time.monotonic() >= deadline:
                    yield None
                    return
                time.sleep(poll_s)
        try:
            yield fd
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


@contextlib.contextmanager
def try_lock(path: Path | str, wait_s: float, *, poll_s: float = 0.02) -> Iterator[bool]:
    """Hold an exclusive flock on `path` (created 0o600 if missing); yields False,
    holding nothing, when it could not be had within `wait_s` seconds."""
    with held_lock(path, wait_s, poll_s=poll_s) as fd:
        yield fd is not None


@contextlib.contextmanager
def file_lock(path: Path | str, what: str, timeout: float = 120.0) -> Iterator[None]:
    """Hold an exclusive flock on `path`; raise FileLocked after `timeout` seconds."""
    with try_lock(path, timeout, poll_s=0.05) as held:
        if not held:
            raise FileLocked(f"timed out waiting for the {what} lock ({path})")
        yield
