"""Files of a repository, its git dir and the user's configuration, read and written
safely, with `pathlib.Path` at the API: `read_file`/`read_text` (regular files only,
bounded, never through a link), `atomic_write` (tmp + fsync + rename, never through a
link), `write_output` (a file the user named), `map_regular_file` (a big file mapped).

The mechanics on str paths (`open_regular`, `AtomicFile`, the locks, the errors) are
`base.fileops`, which the agent hook uses alone.
"""

from __future__ import annotations

import errno
import mmap
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from git_gasp.base.fileops import (
    AtomicFile,
    UnsafePath,
    check_link_target,
    check_links,
    open_regular,
    read_regular_file,
)

__all__ = ["MAX_FILE", "SMALL_FILE", "atomic_write", "link_target", "map_regular_file",
           "open_file", "read_file", "read_text", "refuse_links", "write_output"]


def open_file(path: str | os.PathLike, *, root: str | os.PathLike | None = None):
    """``open(path, "rb")`` for a file of a repository or its git dir: `open_regular`'s
    checks, then an unbuffered-by-default binary file object the caller closes."""
    return os.fdopen(open_regular(path, root=root), "rb")


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


def refuse_links(path: str | os.PathLike, root: str | os.PathLike | None = None
                 ) -> Path:
    """Raise UnsafePath when `path`, or a directory from `root` down to it, is a link.

    With `root`, `path` must also lie inside it. Returns `path` made absolute (not
    resolved: the point is that nothing on the way needed resolving).
    """
    return Path(check_links(path, root))


def link_target(path: str | os.PathLike, allowed: Sequence[str | os.PathLike]) -> Path:
    """Where a write to the link `path` should land: its resolved target, which must
    lie inside one of `allowed` (raises UnsafePath otherwise)."""
    return Path(check_link_target(path, list(allowed)))


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
