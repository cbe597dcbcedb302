"""The one way a file is replaced, and the one file lock.

`AtomicFile` (and its shorthand `atomic_write`) writes a temporary file beside the
target, fsyncs it, renames it over the target and, where the target is new, fsyncs
the directory; on any failure, or on `abort()`, the temporary file is removed and
the target is left as it was. An existing file keeps its mode. It never writes
through a symbolic link: not at the target, and not in any directory between `root`
(the repository) and the target; a user config file that is a link is written at
its target only when the caller names where that target may lie
(`link_targets_within`). Model: git's lock files (lockfile.c).

`file_lock` is an exclusive ``flock`` with a timeout, raising `FileLocked`.
"""

from __future__ import annotations

import errno
import fcntl
import mmap
import os
import stat
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

from git_gasp.base.errors import GaspError


class UnsafePath(GaspError):
    """A write would go through a symbolic link, or outside the place it belongs."""


class FileLocked(GaspError):
    """Another process holds the lock and did not let go within the timeout."""


__all__ = ["MAX_FILE", "SMALL_FILE", "AtomicFile", "FileLocked", "NotARegularFile",
           "UnsafePath", "atomic_write", "file_lock", "fsync_dir", "held_lock",
           "link_target", "map_regular_file", "move_into_place", "open_file", "open_output",
           "open_regular", "read_file", "read_regular_file", "read_text", "refuse_links",
           "remove_file", "try_lock", "write_output"]


# removed once the hook rewrite lands: adapters/live.py and adapters/hook_queue.py use them
def path_str(path: str | os.PathLike) -> str:
    """``str(Path(path))``."""
    return str(Path(path))


def exists(path: str | os.PathLike) -> bool:  # removed once the hook rewrite lands
    """``Path(path).exists()``."""
    return Path(path).exists()


def is_dir(path: str | os.PathLike) -> bool:  # removed once the hook rewrite lands
    """``Path(path).is_dir()``."""
    return Path(path).is_dir()


# --- reading ----------------------------------------------------------------------------


class NotARegularFile(GaspError, OSError):
    """A repository file that is a link, a FIFO, a device, a directory or too big. An
    OSError too (as `FormatError` is a ValueError), so a caller that treats an unreadable
    file as missing or corrupt treats this one so, and the CLI shows its one line."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.strerror = message


_READ_FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_CLOEXEC", 0))


def open_regular(path: str | os.PathLike, *, root: str | os.PathLike | None = None) -> int:
    """An open read-only descriptor of `path`, which must be a regular file (the caller
    closes it); FileNotFoundError when it does not exist, as `open` raises it. Opened
    without following a link (nor one on the way from `root` down to it) and without
    blocking (a FIFO never hangs the reader), and checked on the descriptor: anything
    else is a `NotARegularFile` naming it."""
    name = os.fspath(path)
    try:
        if root is not None:
            _refuse_links(name, root)
        fd = os.open(name, _READ_FLAGS)
    except UnsafePath as exc:
        raise NotARegularFile(str(exc)) from None
    except OSError as exc:
        if exc.errno != errno.ELOOP:  # missing, no permission, ...: as `open` says it
            raise
        raise NotARegularFile(f"{name}: a symbolic link; it must be a regular file") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotARegularFile(f"{name}: not a regular file; refusing to read it")
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_file(path: str | os.PathLike, *, root: str | os.PathLike | None = None):
    """``open(path, "rb")`` for a file of a repository or its git dir: `open_regular`'s
    checks, then an unbuffered-by-default binary file object the caller closes."""
    return os.fdopen(open_regular(path, root=root), "rb")


def read_regular_file(path: str | os.PathLike, *, limit: int,
                      root: str | os.PathLike | None = None) -> bytes | None:
    """The bytes of `path`, which must be a regular file (`open_regular`) of at most
    `limit` bytes; None when it does not exist. Reads at most `limit` + 1 bytes: a link
    to /dev/zero, a FIFO or a huge file is a `NotARegularFile` line, never a hang or an
    exhausted memory."""
    name = os.fspath(path)
    try:
        fd = open_regular(name, root=root)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        chunks, left = [], limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise NotARegularFile(f"{name}: larger than {limit} bytes; refusing to read it")
    return data


MAX_FILE = 1 << 34  # the default bound of `read_file`: refuse absurd files (16 GiB)
SMALL_FILE = 64 << 20  # a control file, cache or side file: far past any honest one


def read_file(path: str | os.PathLike, *, limit: int = MAX_FILE,
              root: str | os.PathLike | None = None) -> bytes:
    """``Path(path).read_bytes()`` for a file of a repository or its git dir:
    `read_regular_file`, raising FileNotFoundError when it does not exist."""
    data = read_regular_file(path, limit=limit, root=root)
    if data is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), os.fspath(path))
    return data


def read_text(path: str | os.PathLike, *, encoding: str = "utf-8", errors: str = "strict",
              limit: int = SMALL_FILE, root: str | os.PathLike | None = None) -> str:
    """``Path(path).read_text(encoding, errors)`` (universal newlines too) through
    `read_file`."""
    text = read_file(path, limit=limit, root=root).decode(encoding, errors)
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def open_output(path: str | os.PathLike, *, append: bool = False):
    """A binary file object writing to `path` (created 0o600, else truncated, or with
    `append` added to), for a log or an output file the process writes in place: never
    through a link at `path`, and only into a regular file (a FIFO or device is a
    `NotARegularFile`). A file replaced whole goes through `atomic_write` instead."""
    name = os.fspath(path)
    flags = (os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
             | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
             | getattr(os, "O_CLOEXEC", 0))
    try:
        fd = os.open(name, flags, 0o600)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        raise NotARegularFile(f"{name}: a symbolic link; refusing to write through it") \
            from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotARegularFile(f"{name}: not a regular file; refusing to write to it")
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "ab" if append else "wb")


def map_regular_file(path: str | os.PathLike, *, root: str | os.PathLike | None = None):
    """The regular file `path` (`open_regular`) mapped read-only (an ``mmap.mmap``; None
    for an empty file, which cannot be mapped), for a file too big to read whole (a
    pack, its index); FileNotFoundError when it is missing."""
    fd = open_regular(path, root=root)
    try:
        return mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    except ValueError:  # an empty file
        return None
    finally:
        os.close(fd)


# --- writing ----------------------------------------------------------------------------


def _refuse_links(path: str | os.PathLike, root: str | os.PathLike | None = None) -> str:
    target = os.path.abspath(path)
    if root is None:
        parts = [target]
    else:
        base = os.path.abspath(root)
        if not Path(target).is_relative_to(base):
            raise UnsafePath(f"{target}: outside {base}; refusing to write there")
        rel = Path(target).relative_to(base).parts
        parts = [os.path.join(base, *rel[: i + 1]) for i in range(len(rel))]
    for part in parts:
        if os.path.islink(part):
            what = "is a symbolic link" if part == target else f"lies under a link ({part})"
            raise UnsafePath(f"{target}: {what}; refusing to write through it")
    return target


def refuse_links(path: str | os.PathLike, root: str | os.PathLike | None = None
                 ) -> Path:
    """Raise UnsafePath when `path`, or a directory from `root` down to it, is a link.

    With `root`, `path` must also lie inside it. Returns `path` made absolute (not
    resolved: the point is that nothing on the way needed resolving).
    """
    return Path(_refuse_links(path, root))


def _link_target(path: str | os.PathLike, allowed: Sequence[str | os.PathLike]) -> str:
    real = os.path.realpath(path)
    for place in allowed:
        if Path(real).is_relative_to(os.path.realpath(place)):
            return real
    raise UnsafePath(f"{path}: a link to {real}, outside "
                     + " and ".join(str(p) for p in allowed) + "; refusing to write through it")


def link_target(path: str | os.PathLike, allowed: Sequence[str | os.PathLike]) -> Path:
    """Where a write to the link `path` should land: its resolved target, which must
    lie inside one of `allowed` (raises UnsafePath otherwise)."""
    return Path(_link_target(path, allowed))


def fsync_dir(directory: str | os.PathLike) -> None:
    """fsync a directory so a new entry in it survives a crash (best effort)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass


class AtomicFile:
    """A binary file open for writing that replaces `path` on `close()`, or not at all.

    `root`: the repository (or other tree) the target lives in; no directory from it
    down may be a link. `link_targets_within`: when the target itself is a link, write
    at its resolved target if that lies inside one of these directories (the link is
    kept); with none given, a link is refused. `mode`: for a new file (default
    0o666 less the umask); an existing file keeps its own. `durable=False` skips the
    fsyncs, for caches that are rebuilt when lost. `path`: the absolute path (a str)
    the bytes go to.
    """

    def __init__(self, path: str | os.PathLike, *, root: str | os.PathLike | None = None,
                 link_targets_within: Sequence[str | os.PathLike] = (),
                 mode: int | None = None, durable: bool = True,
                 make_parents: bool = False) -> None:
        target = os.path.abspath(path)
        if link_targets_within and os.path.islink(target):
            if root is not None:
                _refuse_links(os.path.dirname(target), root)
            target = _link_target(target, link_targets_within)
        else:
            _refuse_links(target, root)
        directory, name = os.path.split(target)
        if make_parents:
            os.makedirs(directory, exist_ok=True)
            _refuse_links(target, root)
        self.path = target
        self._durable = durable
        try:
            self._old_mode: int | None = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            self._old_mode = None
        if not name:
            raise ValueError(f"{target!r} has an empty name")
        self._tmp = os.path.join(directory, f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
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
        try:
            self._file.close()
        except OSError:
            pass
        try:
            os.unlink(self._tmp)
        except OSError:
            pass

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
            fsync_dir(os.path.dirname(self.path))

    def __enter__(self) -> AtomicFile:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def atomic_write(path: str | os.PathLike, data: bytes, **options) -> Path:
    """Replace `path` with `data` atomically (options as for `AtomicFile`); returns
    the path written (a link's target when `link_targets_within` allowed it)."""
    with AtomicFile(path, **options) as fh:
        fh.write(data)
    return Path(fh.path)


def write_output(path: str | os.PathLike, data: bytes, **options) -> Path:
    """Write `data` to an output file the user named (``-o FILE``): a character device
    or FIFO there (``/dev/stdout``, ``/dev/null``, a pipe) is written to as a shell's
    ``>`` would, never replaced by a file; a block device, socket or directory is
    refused (UnsafePath); anything else is `atomic_write` (`options` as for it: with
    `root`, a link at `path` is refused, never written through)."""
    try:  # a link is followed (the user named its target), unless under `root`
        mode = (os.lstat if options.get("root") is not None else os.stat)(path).st_mode
    except (OSError, ValueError):
        mode = None
    if mode is not None and (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)):
        fd = os.open(path, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        return Path(path)
    if mode is not None and not stat.S_ISREG(mode):
        what = ("a directory" if stat.S_ISDIR(mode) else "a block device"
                if stat.S_ISBLK(mode) else "not a regular file")
        raise UnsafePath(f"{os.fspath(path)}: {what}; refusing to write there")
    return atomic_write(path, data, **options)


def move_into_place(src: str | os.PathLike, dest: str | os.PathLike, *,
                    root: str | os.PathLike | None = None) -> None:
    """Rename the finished file or directory `src` to `dest` (same filesystem), refusing
    a link at `dest` or on the way to it."""
    _refuse_links(dest, root)
    os.replace(src, dest)


def remove_file(path: str | os.PathLike) -> None:
    """``pathlib.Path(path).unlink(missing_ok=True)``: remove `path` (never a directory)
    when it is there."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


# --- locking ----------------------------------------------------------------------------


class _Flock:
    """An exclusive flock on a file, held between ``__enter__`` and ``__exit__`` (a class,
    not ``contextlib.contextmanager``: the agent hook takes a lock on every call, and
    importing contextlib costs it 2 % more)."""

    def __init__(self, path: str | os.PathLike, wait_s: float, poll_s: float,
                 what: str | None = None) -> None:
        self.path, self.wait_s, self.poll_s, self.what = path, wait_s, poll_s, what
        self.fd: int | None = None
        self.held = False

    def acquire(self) -> None:
        path = self.path
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
                         | getattr(os, "O_NONBLOCK", 0), 0o600)
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
            raise NotARegularFile(f"{os.fspath(path)}: a symbolic link; refusing to lock "
                                  "through it") from None
        got = False
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise NotARegularFile(f"{os.fspath(path)}: not a regular file; refusing to "
                                      "lock it")
            deadline = time.monotonic() + self.wait_s
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    got = True
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                        raise
                    if time.monotonic() >= deadline:
                        break
                    time.sleep(self.poll_s)
        finally:
            if not got:
                os.close(fd)
        self.fd, self.held = (fd, True) if got else (None, False)
        if not got and self.what is not None:
            raise FileLocked(f"timed out waiting for the {self.what} lock ({path})")

    def release(self) -> None:
        fd, self.fd, self.held = self.fd, None, False
        if fd is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()


class _HeldLock(_Flock):
    def __enter__(self) -> int | None:
        self.acquire()
        return self.fd


class _TriedLock(_Flock):
    def __enter__(self) -> bool:
        self.acquire()
        return self.held


def held_lock(path: str | os.PathLike, wait_s: float, *, poll_s: float = 0.02) -> _HeldLock:
    """Hold an exclusive flock on `path` (created 0o600 if missing) in a ``with``; gives
    its open descriptor (a child that inherits it holds the lock too), or None, holding
    nothing, when it could not be had within `wait_s` seconds."""
    return _HeldLock(path, wait_s, poll_s)


def try_lock(path: str | os.PathLike, wait_s: float, *, poll_s: float = 0.02) -> _TriedLock:
    """Hold an exclusive flock on `path` (created 0o600 if missing) in a ``with``; gives
    False, holding nothing, when it could not be had within `wait_s` seconds."""
    return _TriedLock(path, wait_s, poll_s)


def file_lock(path: str | os.PathLike, what: str, timeout: float = 120.0) -> _TriedLock:
    """Hold an exclusive flock on `path` in a ``with``; raise FileLocked after `timeout`
    seconds."""
    return _TriedLock(path, timeout, 0.05, what)
