"""Reading an agent repo's files from the working tree, refusing unsafe shapes.

A log that is a directory, a symlink, or not a regular file is refused with a
reason: git would store a symlink's target path, not the events.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from git_gasp.base.files import open_file

MAX_FILE = 1 << 34  # refuse absurd files rather than exhausting memory (16 GiB)


class AgentFileError(ValueError):
    """A file of the agent repo cannot be read as what it should be."""


def read_regular(root: str | os.PathLike, relpath: str) -> bytes:
    """Read root/relpath, which must be a regular file inside root (not a symlink)."""
    path = str(Path(root, relpath))
    regular_file(root, relpath)
    try:
        with open_file(path) as f:
            return f.read()
    except OSError as exc:
        raise AgentFileError(f"{relpath} cannot be read: {exc.strerror}") from None


def regular_file(root: str | os.PathLike, relpath: str) -> os.stat_result:
    """The lstat of root/relpath after `read_regular`'s checks, without reading it."""
    path = str(Path(root, relpath))
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise AgentFileError(f"{relpath} is missing") from None
    except OSError as exc:
        raise AgentFileError(f"{relpath} cannot be read: {exc.strerror}") from None
    if stat.S_ISLNK(st.st_mode):
        target = os.readlink(path)
        inside = Path(os.path.realpath(path)).is_relative_to(os.path.realpath(root))
        where = "inside" if inside else "outside"
        raise AgentFileError(
            f"{relpath} is a symlink to {target!r} ({where} the repo); git would commit the "
            "link, not the content — replace it with the real file"
        )
    if stat.S_ISDIR(st.st_mode):
        raise AgentFileError(f"{relpath} is a directory, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise AgentFileError(f"{relpath} is not a regular file")
    if st.st_size > MAX_FILE:
        raise AgentFileError(f"{relpath} is larger than 16 GiB")
    for parent in [str(p) for p in Path(relpath).parents]:
        if parent != "." and Path(root, parent).is_symlink():
            raise AgentFileError(f"{parent} (holding {relpath}) is a symlink")
    return st


def file_paths(root: str | os.PathLike, reldir: str) -> list[tuple[bytes, str]]:
    """Regular files under root/reldir as (relative path bytes with '/', absolute path).

    Symlinked files or directories are refused (AgentFileError); the walk is iterative.
    """
    base = str(Path(root, reldir))
    if Path(base).is_symlink():
        raise AgentFileError(f"{reldir}/ is a symlink")
    if not Path(base).is_dir():
        raise AgentFileError(f"{reldir}/ is missing")
    out: list[tuple[bytes, str]] = []
    stack = [base]
    while stack:
        current = stack.pop()
        with os.scandir(current) as entries:
            for entry in entries:
                rel = os.fsencode(os.path.relpath(entry.path, root)).replace(os.sep.encode(), b"/")
                if entry.is_symlink():
                    raise AgentFileError(f"{os.fsdecode(rel)} is a symlink")
                if entry.is_dir():
                    stack.append(entry.path)
                elif entry.is_file():
                    out.append((rel, entry.path))
    out.sort()
    return out


def list_files(root: str | os.PathLike, reldir: str) -> list[tuple[bytes, Path]]:
    """`file_paths` with each absolute path a pathlib.Path."""
    return [(rel, Path(path)) for rel, path in file_paths(root, reldir)]
