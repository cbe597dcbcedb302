"""Remembered parses: the exact bytes of a small file that parsed cleanly last time,
kept under the git dir, so a re-check of the same bytes skips the parser (and its
import). The bytes themselves are the key (no hash to collide); a different Python
or memo format never matches; losing or corrupting a memo only costs one parse."""

from __future__ import annotations

import os
import sys

from git_gasp.base.errors import GaspError
from git_gasp.base.files import atomic_write, open_file
from git_gasp.odb.gitdirs import locate

_FORMAT = 1
_MAX_BYTES = 1 << 16  # bigger files are parsed every time


def _memo_path(root: str | os.PathLike, name: str) -> tuple[str, bytes] | None:
    dirs = locate(str(root))
    if dirs is None:
        return None
    rel = os.path.relpath(root, dirs.path).encode("utf-8", "surrogateescape")
    header = b"git-gasp parsed %d %s %s %s\n" % (
        _FORMAT, name.encode(), sys.version.split()[0].encode(), rel)
    return os.path.join(dirs.commondir(), "gasp", f"parsed-{name}"), header


def parsed_before(root: str | os.PathLike, name: str, data: bytes) -> bool:
    """True when `data` is exactly what parsed cleanly as `name` for this agent root."""
    where = _memo_path(root, name) if len(data) <= _MAX_BYTES else None
    if where is None:
        return False
    path, header = where
    try:
        with open_file(path) as f:
            return f.read(len(header) + len(data) + 1) == header + data
    except OSError:
        return False


def remember_parsed(root: str | os.PathLike, name: str, data: bytes) -> None:
    """Record that `data` parsed cleanly as `name` (best effort, never fatal)."""
    where = _memo_path(root, name) if len(data) <= _MAX_BYTES else None
    if where is None:
        return
    path, header = where
    try:
        atomic_write(path, header + data, durable=False, make_parents=True)
    except (OSError, GaspError):
        pass
