"""The stamp of a saved index file — its inode, size, mtime and ctime, which any write
changes — and the ``<file>.checked`` note beside a whole entry, which holds the stamp
the entry had when it was last summed in full: while the entry still has that stamp,
`index_files` does not sum it again (see ``IndexFiles._read`` for when a stamp is kept).
"""

from __future__ import annotations

import os

from git_gasp.base.errors import GaspError
from git_gasp.base.fileops import AtomicFile
from git_gasp.base.files import open_file

CHECKED = ".checked"  # beside a whole entry: the stamp it had when last checked in full
_NONE = b"-"


def checked_stamp(path: str) -> bytes:
    """The stamp a whole entry had when it was last checked in full as the newest file
    of its chain (its note ``<path>.checked``), or "-"."""
    try:
        with open_file(path + CHECKED) as f:
            text = f.read(128)
    except OSError:
        return _NONE
    return text if is_stamp(text) else _NONE


def vouch(path: str, stamp: bytes) -> None:
    """Note that the whole entry at `path`, with `stamp` (or "-": none to vouch for), was
    checked (best effort); the note's mtime stands for the entry's in
    `IndexFiles._entries` (index_files)."""
    try:
        with open_file(path + CHECKED) as f:
            same = f.read(128) == stamp
    except OSError:
        same = False
    try:
        if same:
            os.utime(path + CHECKED)
        else:
            with AtomicFile(path + CHECKED, durable=False) as out:
                out.write(stamp)
    except (OSError, GaspError):
        pass


def stamp_of(st: os.stat_result) -> bytes:
    """What any write to a file changes: its inode, size, mtime and ctime."""
    return b"%d.%d.%d.%d" % (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def is_stamp(text: bytes) -> bool:
    parts = text.split(b".")
    return len(parts) == 4 and all(x.isdigit() and len(x) <= 20 for x in parts)
