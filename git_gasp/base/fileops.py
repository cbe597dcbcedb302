"""File operations on str paths, the mechanics under `base.files`: open a regular file
without following a link, replace a file atomically, take a file lock.

`AtomicFile` writes a temporary file beside the target, fsyncs it, renames it over the
target and, where the target is new, fsyncs the directory; on any failure, or on
`abort()`, the temporary file is removed and the target is left as it was. An existing
file keeps its mode. It never writes through a symbolic link: not at the target, and
not in any directory between `root` (the repository) and the target; a user config
file that is a link is written at its target only when the caller names where that
target may lie (`link_targets_within`). Model: git's lock files (lockfile.c).

`file_lock` is an exclusive ``flock`` with a timeout, raising `FileLocked`.

The agent hook (``adapters/agent_hook/``, run twice per tool call) queues its payload with
these alone, so this module imports only ``os``, ``stat``, ``errno``, ``fcntl`` and
``time``; the pathlib-level API (`read_file`, `atomic_write`, ...) is `base.files`.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import time

from git_gasp.base.errors import GaspError


class UnsafePath(GaspError):
    """A write would go through a symbolic link, or outside the place it belongs."""


class FileLocked(GaspError):
    """Another process holds the lock and did not let go within the timeout."""


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
            check_links(name, root)
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


def within(path: str, base: str) -> bool:
    """Whether the absolute, normalised path `path` is `base` or lies under it."""
    return path == base or path.startswith(base.rstrip(os.sep) + os.sep)


def check_links(path: str | os.PathLike, root: str | os.PathLike | None = None) -> str:
    """`path` made absolute (not resolved); raise UnsafePath when it, or a directory from
    `root` down to it, is a symbolic link, or when it lies outside `root`."""
    target = os.path.abspath(path)
    if root is None:
        parts = [target]
    else:
        base = os.path.abspath(root)
        if not within(target, base):
            raise UnsafePath(f"{target}: outside {base}; refusing to write there")
        rel = [p for p in target[len(base):].split(os.sep) if p]
        parts = [os.path.join(base, *rel[: i + 1]) for i in range(len(rel))]
    for part in parts:
        if os.path.islink(part):
            what = "is a symbolic link" if part == target else f"lies under a link ({part})"
            raise UnsafePath(f"{target}: {what}; refusing to write through it")
    return target


def check_link_target(path: str | os.PathLike,
                      allowed: tuple[str | os.PathLike, ...] | list[str | os.PathLike]
                      ) -> str:
    """The resolved target of the link `path`, which must lie inside one of `allowed`
    (raises UnsafePath otherwise)."""
    real = os.path.realpath(path)
    for place in allowed:
        if within(real, os.path.realpath(place)):
            return real
    raise UnsafePath(f"{path}: a link to {real}, outside "
                     + " and ".join(str(p) for p in allowed) + "; refusing to write through it")


def sync_dir(directory: str | os.PathLike) -> None:
    """fsync a directory so a new entry in it survives a crash (raises OSError)."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(directory: str | os.PathLike) -> None:
    """`sync_dir`, best effort: a failure is ignored."""
    try:
        sync_dir(directory)
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
                 link_targets_within: tuple[str | os.PathLike, ...] | list[str | os.PathLike] = (),
                 mode: int | None = None, durable: bool = True,
                 make_parents: bool = False) -> None:
        target = os.path.abspath(path)
        if link_targets_within and os.path.islink(target):
            if root is not None:
                check_links(os.path.dirname(target), root)
            target = check_link_target(target, link_targets_within)
        else:
            check_links(target, root)
        directory, name = os.path.split(target)
        if make_parents:
            os.makedirs(directory, exist_ok=True)
            check_links(target, root)
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
                 tb: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def move_into_place(src: str | os.PathLike, dest: str | os.PathLike, *,
                    root: str | os.PathLike | None = None) -> None:
    """Rename the finished file or directory `src` to `dest` (same filesystem), refusing
    a link at `dest` or on the way to it."""
    check_links(dest, root)
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
                 tb: object) -> None:
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
