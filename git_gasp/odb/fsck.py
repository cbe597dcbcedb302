"""Tree-entry rules as ``git fsck --strict`` (and ``receive.fsckObjects``) states them,
checked on a tree object's raw body, whichever parser then reads it.

A tree that breaks one is refused: git and a parser that keeps the last of two entries
of one name read different files at the same path (a duplicate ``events.jsonl`` let a
push erase history past the server's guard), and names git would never check out
(``.git``, ``..``, a name with ``/``) have no meaning to compare. Each refusal carries
git's message id (``duplicateEntries``, ``treeNotSorted``, ...) and the entry's name.
"""

from __future__ import annotations

import re

_DIR, _SUBMODULE = 0o040000, 0o160000
# git fsck's standard modes (0o100664 is tolerated only without --strict)
_MODES = frozenset({0o100644, 0o100755, 0o120000, _DIR, _SUBMODULE})
_DIGITS = b"01234567"
# code points HFS+ ignores in names (git's is_hfs_dotgit), as UTF-8
_HFS_IGNORED = tuple(chr(c).encode() for c in (
    *range(0x200C, 0x2010), *range(0x202A, 0x202F), *range(0x206A, 0x2070), 0xFEFF))


# one well-formed entry: a standard mode, unpadded; a name with neither NUL nor '/'
_ENTRY = re.compile(rb"(?s)(100644|100755|120000|40000|160000) ([^\0/]+)\0.{20}")
# in the names joined by NULs: '.', '..', a '.git' look-alike, or a byte starting one
# of the code points HFS+ ignores (U+200C.., U+202A.., U+206A.., U+FEFF)
_SUSPECT = re.compile(rb"(?i)\0(?:\.\.?|\.git[. ]*|git~1)\0|[\xe2\xef]")


class TreeProblem(ValueError):
    """A tree entry git fsck refuses: `msg_id` (git's), the entry's `name`, and why."""

    def __init__(self, msg_id: str, name: bytes, why: str) -> None:
        super().__init__(f"{why} (git fsck: {msg_id})")
        self.msg_id, self.name, self.why = msg_id, name, why


def is_dotgit(name: bytes) -> bool:
    """True for a name git treats as ``.git``: any case, HFS+'s ignored code points
    removed, NTFS's trailing dots and spaces or its short name ``git~1``."""
    if 0xE2 in name or 0xEF in name:
        for ignored in _HFS_IGNORED:
            name = name.replace(ignored, b"")
    low = name.lower()
    return low.rstrip(b". ") == b".git" or low == b"git~1"


def _name_problem(name: bytes) -> TreeProblem | None:
    if not name:
        return TreeProblem("emptyName", name, "a tree entry has an empty name")
    if b"/" in name:
        return TreeProblem("fullPathname", name, f"tree entry {_shown(name)} holds a '/'")
    if name == b".":
        return TreeProblem("hasDot", name, "a tree entry is named '.'")
    if name == b"..":
        return TreeProblem("hasDotdot", name, "a tree entry is named '..'")
    if is_dotgit(name):
        return TreeProblem("hasDotgit", name, f"a tree entry is named {_shown(name)}, "
                           "which git reads as .git")
    return None


def _shown(name: bytes) -> str:
    return repr(name.decode("utf-8", "backslashreplace"))


def check_tree(data: bytes | memoryview) -> None:
    """Raise TreeProblem unless the (sha1) tree body `data` is one git fsck --strict
    accepts: well-formed entries with standard modes (no zero padding), names neither
    empty nor holding '/' nor '.', '..' or a form of '.git', sorted as git sorts them
    (a directory as if its name ended with '/'), and no name twice."""
    data = bytes(data)
    if not _accepts(data):
        _explain(data)


def _accepts(data: bytes) -> bool:
    """True when `data` surely passes (a few passes in C, no loop per entry in Python);
    False sends it to `_explain`, which says why, or accepts it after all."""
    pairs = _ENTRY.findall(data)  # the matches tile `data` iff their lengths add up
    if not pairs:
        return not data
    modes, names = zip(*pairs, strict=True)
    if sum(map(len, names)) + sum(map(len, modes)) + 22 * len(pairs) != len(data) \
            or len(set(names)) != len(names):
        return False
    keys = [name + b"/" if mode == b"40000" else name for mode, name in pairs]
    if not all(map(bytes.__lt__, keys, keys[1:])):
        return False
    return _SUSPECT.search(b"\0" + b"\0".join(names) + b"\0") is None


def _explain(data: bytes) -> None:
    """Raise the TreeProblem of the first entry of `data` git fsck refuses, if any."""
    at, end = 0, len(data)
    seen: set[bytes] = set()
    prev = b""
    while at < end:
        space = data.find(b" ", at, at + 8)
        nul = data.find(b"\0", space + 1) if space > at else -1
        if nul < 0 or nul + 21 > end:
            raise TreeProblem("badTree", data[at:at + 40], "a tree entry is cut short or "
                              "its mode is malformed")
        mode_text = data[at:space]
        name = data[space + 1:nul]
        at = nul + 21
        if mode_text.strip(_DIGITS):
            raise TreeProblem("badTree", name, f"tree entry {_shown(name)} has a malformed "
                              f"mode {mode_text!r}")
        mode = int(mode_text, 8)
        problem = _name_problem(name)
        if problem is not None:
            raise problem
        if mode not in _MODES:
            raise TreeProblem("badFilemode", name, f"tree entry {_shown(name)} has the "
                              f"non-standard mode {mode_text.decode()}")
        if mode_text[:1] == b"0":
            raise TreeProblem("zeroPaddedFilemode", name, f"tree entry {_shown(name)} has "
                              f"the zero-padded mode {mode_text.decode()}")
        if name in seen:
            raise TreeProblem("duplicateEntries", name, f"the tree holds two entries named "
                              f"{_shown(name)} (git reads the first, a dict the last)")
        seen.add(name)
        key = name + b"/" if mode == _DIR else name
        if key <= prev:
            raise TreeProblem("treeNotSorted", name, f"tree entry {_shown(name)} is out of "
                              "git's order")
        prev = key
