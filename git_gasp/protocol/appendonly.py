"""Append-only rules for GASP check 4 (Part VI): pure functions, no I/O.

The log, every ``facts.jsonl`` and every ``JOURNAL.md`` may only grow at the
end. These helpers decide which paths are append-only and explain, in one short
sentence, why a new version does not extend an old one.
"""

from __future__ import annotations

import posixpath
from collections import Counter

LOG_PATH = b"state/events.jsonl"
# Where each append-only role lives unless the manifest moves it.
DEFAULT_ROLES = {"log": LOG_PATH, "facts": b"memory/facts.jsonl", "journal": b"JOURNAL.md"}
APPEND_ONLY_BASENAMES = frozenset({b"facts.jsonl", b"JOURNAL.md"})

def is_append_only(relpath: bytes, declared: frozenset[bytes] = frozenset()) -> bool:
    """True if `relpath` (relative to the agent root, ``/``-separated) is append-only."""
    if relpath == LOG_PATH or relpath in declared:
        return True
    return posixpath.basename(relpath) in APPEND_ONLY_BASENAMES


class AppendOnlyPaths:
    """The append-only paths of one commit, as its own manifest says (relative to the
    agent root): the log (and the facts and journal files a manifest moves) by role,
    any further declared paths, and every ``facts.jsonl`` and ``JOURNAL.md``.

    ``path in paths`` says whether a path is append-only. Moving a role between a
    parent and a child (``roles``) is allowed only when the child's file extends the
    parent's: the history must not vanish through a manifest edit.
    """

    __slots__ = ("roles", "declared", "_explicit")

    def __init__(self, roles: dict[str, bytes] | None = None,
                 declared: frozenset[bytes] = frozenset()) -> None:
        self.roles: dict[str, bytes] = {**DEFAULT_ROLES, **(roles or {})}
        self.declared = declared
        self._explicit = frozenset(self.roles.values()) | declared

    def __contains__(self, relpath: object) -> bool:
        return relpath in self._explicit or (  # (the basename, as posixpath.basename)
            isinstance(relpath, bytes) and relpath.rpartition(b"/")[2] in APPEND_ONLY_BASENAMES)

    @property
    def log(self) -> bytes:
        return self.roles["log"]

    def explicit(self) -> frozenset[bytes]:
        """The paths named (by role or declaration), not found by their basename."""
        return self._explicit

    def union(self, other: AppendOnlyPaths) -> AppendOnlyPaths:
        """Append-only in either (the roles are this one's)."""
        merged = AppendOnlyPaths(self.roles, self.declared | other.explicit())
        return merged

    def moves(self, child: AppendOnlyPaths) -> dict[bytes, tuple[str, bytes]]:
        """Parent path -> (role, the child's path) for each role the child moves."""
        out: dict[bytes, tuple[str, bytes]] = {}
        for role, old in self.roles.items():
            new = child.roles[role]
            if new != old:
                out[old] = (role, new)
        return out

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AppendOnlyPaths) and (self.roles, self.declared) == (
            other.roles, other.declared)

    def __hash__(self) -> int:
        return hash((tuple(sorted(self.roles.items())), self.declared))

    def __repr__(self) -> str:
        return f"AppendOnlyPaths({self.roles!r}, {sorted(self.declared)!r})"


def common_prefix_len(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix of `a` and `b` (memcmp bisection, no copies)."""
    limit = min(len(a), len(b))
    view = memoryview(a)
    if b.startswith(view[:limit]):
        return limit
    lo, hi = 0, limit  # a[:lo] == b[:lo]; the first difference is in [lo, hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if b.startswith(view[lo:mid], lo):
            lo = mid
        else:
            hi = mid
    return lo


def _line_of(data: bytes, offset: int) -> int:
    """1-based number of the line holding byte `offset` of `data`."""
    return data.count(b"\n", 0, offset) + 1


def extension_problem(old: bytes, new: bytes) -> tuple[int, str] | None:
    """Like `extension_error`, but also return the 1-based line number."""
    n = len(old)
    if new.startswith(old):
        if n and old[-1] != 0x0A and len(new) > n and new[n] != 0x0A:
            line = _line_of(old, n)
            return line, f"the unterminated last line {line} was extended"
        return None
    i = common_prefix_len(old, new)
    line = _line_of(old, i)
    if i == len(new):  # new is a strict prefix of old
        at_line_start = i == 0 or old[i - 1] == 0x0A
        what = "deleted" if at_line_start else "truncated"
        return line, f"line {line} was {what} (file shrank)"
    return line, f"line {line} was modified in place"


def extension_error(old: bytes, new: bytes) -> str | None:
    """Why `new` does not extend `old` (the one-parent rule), or None if it does.

    `new` must start with `old`; when `old` is non-empty and its last line lacks
    a terminator, the next byte of `new` must be ``\\n`` (else that line was
    extended in place).
    """
    problem = extension_problem(old, new)
    return None if problem is None else problem[1]


def _lines(data: bytes) -> list[bytes]:
    """Lines of `data` without their ``\\n`` terminators."""
    parts = data.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    return parts


def merge_problem(parent: bytes, result: bytes) -> tuple[int, str] | None:
    """Like `merge_error`, but also return the 1-based parent line number."""
    if result.startswith(parent) and (not parent or parent[-1] == 0x0A):
        return None
    # Whole lines shared as a byte prefix match one to one, so only the tails need
    # comparing: each parent line must occur in the result tail at least as often.
    skip = parent.rfind(b"\n", 0, common_prefix_len(parent, result)) + 1
    want = _lines(parent[skip:])
    have = Counter(_lines(result[skip:]))
    for index, line in enumerate(want):
        if have[line] <= 0:
            number = parent.count(b"\n", 0, skip) + index + 1
            return number, f"line {number} of the parent is missing from the result"
        have[line] -= 1
    return None


def merge_error(parent: bytes, result: bytes) -> str | None:
    """Why a merge `result` loses lines of a non-first `parent`, or None.

    Every line of `parent` (compared without its terminator) must appear in
    `result`, as often as in `parent`. Order is not required: after a criss-cross
    merge, or a cherry-pick whose branch is merged later, two parents can hold the
    same appended lines in different orders, and no single result keeps both orders
    without duplicating events. A line edited or dropped by the merge still fails.
    """
    problem = merge_problem(parent, result)
    return None if problem is None else problem[1]


def shared_line_prefix_len(versions: list[bytes]) -> int:
    """Byte length of the longest run of whole (terminated) lines every version starts with."""
    if not versions:
        return 0
    first = versions[0]
    shared = len(first)
    for other in versions[1:]:
        shared = min(shared, common_prefix_len(first, other))
    return first.rfind(b"\n", 0, shared) + 1


def merge_result_problem(parents: list[bytes], result: bytes) -> tuple[int, int, str] | None:
    """Why a merge `result` is not an append-only merge of `parents`, or None.

    The rule, the same for every parent: the lines all parents share at their start
    stay the start of the result, and every other line of every parent is kept, as
    often as it occurs in that parent, in whatever order git resolved the concurrent
    suffixes (a criss-cross merge whose virtual base equals one side resolves to the
    other side's order without running the merge driver). The result may add lines
    of its own. Returns (index of the parent, 1-based line number in it, reason).
    """
    skip = shared_line_prefix_len(parents)
    if not result.startswith(memoryview(parents[0])[:skip]):
        line, _ = extension_problem(parents[0][:skip], result) or (1, "")
        return 0, line, f"line {line} was modified in place"
    have = Counter(_lines(result[skip:]))
    for index, parent in enumerate(parents):
        tail = _lines(parent[skip:])
        need = Counter(tail)
        for at, line in enumerate(tail):
            if have[line] >= need[line]:
                continue
            number = parents[0].count(b"\n", 0, skip) + 1 + at  # counted only to report
            what = "is missing from" if have[line] == 0 else "occurs fewer times in"
            torn = not parent.endswith(b"\n") and at == len(tail) - 1
            hint = " (its unterminated last line was extended?)" if torn else ""
            return index, number, f"line {number} of parent {index + 1} {what} the result{hint}"
    return None
