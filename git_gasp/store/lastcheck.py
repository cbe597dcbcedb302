"""The last `git gasp check` verdict of a work tree, for `git gasp status`.

One line in ``<git dir>/gasp/last-check`` (per worktree: each has its own HEAD):
``gasp-last-check 1 <HEAD or -> <conformant 1|0> <ms since the epoch> <failed checks,
comma-separated, or ->``. Written after every check of the repository (it is a record,
not a cache: ``--no-cache`` writes it too), read through `base.files.read_regular_file`.
"""

from __future__ import annotations

import os

from git_gasp.base.errors import GaspError
from git_gasp.base.fileops import NotARegularFile, read_regular_file
from git_gasp.base.files import atomic_write
from git_gasp.odb.gitdirs import locate

MAGIC = b"gasp-last-check 1"
_LIMIT = 4096


def _path(root: str) -> str | None:
    dirs = locate(root)
    return None if dirs is None else os.path.join(dirs.controldir(), "gasp", "last-check")


def save(root: str, *, conformant: bool, failed: list[int], now_ms: int) -> None:
    """Record the verdict of a check of the agent at `root` against its HEAD now (best
    effort: a verdict that cannot be written is not a check failure)."""
    dirs = locate(root)
    path = _path(root)
    if dirs is None or path is None:
        return
    head = dirs.head()
    head_text = head if isinstance(head, bytes) else b"-"
    fails = b",".join(b"%d" % n for n in failed) or b"-"
    line = b"%s %s %d %d %s\n" % (MAGIC, head_text, int(conformant), now_ms, fails)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        atomic_write(path, line)
    except (OSError, GaspError):  # a link or FIFO in its place: no verdict is recorded
        pass


def load(root: str) -> dict | None:
    """The last verdict recorded for `root` ({head, conformant, ts_ms, failed}), or None."""
    path = _path(root)
    try:
        data = read_regular_file(path, limit=_LIMIT) if path is not None else None
    except NotARegularFile:
        return None
    fields = (data or b"").split()
    if len(fields) != 6 or b" ".join(fields[:2]) != MAGIC or not fields[4].isdigit():
        return None
    failed = [] if fields[5] == b"-" else [int(x) for x in fields[5].split(b",") if x.isdigit()]
    return {"head": None if fields[2] == b"-" else fields[2].decode("ascii", "replace"),
            "conformant": fields[3] == b"1", "ts_ms": int(fields[4]), "failed": failed}
