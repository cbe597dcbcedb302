"""Union merge of JSONL files (`state/events.jsonl`, `facts.jsonl`) by line identity.

A line's identity is its JSON `id` string, else its exact bytes. The result is
ours, then theirs' lines that ours does not already hold, in theirs' order. A
side that lost or changed a base line, or a theirs line whose id ours carries
with another body, is a conflict. One pass over each side with hash maps.
"""

from __future__ import annotations

import orjson

from git_gasp.merge.lines import (
    MergeResult,
    appended,
    conflict_of_sides,
    join,
    split,
    terminated,
)
from git_gasp.protocol.appendonly import merge_problem

Key = str | bytes  # an `id` string, or the line's bytes when it has none
MAX_NAMED = 10  # conflicts named one by one before "and N more"


def line_key(line: bytes) -> Key:
    """A line's identity: its JSON `id` when that is a string, else its exact bytes."""
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return line
    if type(obj) is dict:
        eid = obj.get("id")
        if type(eid) is str:
            return eid
    return line


class LineIndex:
    """The lines of one side by identity; an id may carry several bodies (a bad log)."""

    __slots__ = ("first", "extra")

    def __init__(self, lines: list[bytes]) -> None:
        first: dict[Key, bytes] = {}
        extra: set[tuple[Key, bytes]] = set()
        setdefault = first.setdefault
        for line in lines:
            key = line_key(line)
            had = setdefault(key, line)
            if had is not line and had != line:
                extra.add((key, line))
        self.first = first
        self.extra = extra

    def has(self, key: Key, line: bytes) -> bool | None:
        """True: this exact line is here; False: its id is, with another body; None: absent."""
        had = self.first.get(key)
        if had is None:
            return None
        return had == line or (key, line) in self.extra


def _describe(key: Key) -> str:
    if isinstance(key, str):
        return f"id {key}"
    return f"line {key[:60].decode(errors='replace')!r}"


def _missing_base_line(base_lines: list[bytes], side: LineIndex) -> str | None:
    """Why `side` does not hold every base line (in any order), or None if it does."""
    for number, line in enumerate(base_lines, 1):
        key = line_key(line)
        found = side.has(key, line)
        if found is None:
            return f"base line {number} ({_describe(key)}) is missing"
        if found is False:
            return f"base line {number} ({_describe(key)}) was changed"
    return None


def _locate(lines: list[bytes], key: Key) -> int:
    """1-based number of the first line of `lines` with identity `key` (0 if none)."""
    for number, line in enumerate(lines, 1):
        if line_key(line) == key:
            return number
    return 0


def merge_jsonl(base: bytes, ours: bytes, theirs: bytes, marker_size: int = 7) -> MergeResult:
    """Merge three versions of a JSONL file; see the module docstring for the rules."""
    ours_lines = split(ours)
    theirs_lines = split(theirs)
    ours_index = LineIndex(ours_lines)
    base_lines: list[bytes] | None = None
    rewrites: list[str] = []

    # Which theirs lines can be new: after base when theirs extends it line-wise,
    # else all of them (a side that reorders base, as a criss-cross virtual base does).
    t_add = appended(base, theirs)
    start = len(theirs_lines) - len(split(t_add)) if t_add is not None else 0
    for name, add, index in (
        ("ours", appended(base, ours), ours_index),
        ("theirs", t_add, None),
    ):
        if add is not None:
            continue
        if base_lines is None:
            base_lines = split(base)
        problem = _missing_base_line(base_lines, index or LineIndex(theirs_lines))
        if problem is not None:
            rewrites.append(f"{name} rewrote the common base: {problem}")
    if rewrites:
        return MergeResult(conflict_of_sides(ours, theirs, marker_size), False, rewrites)

    kept: list[bytes] = []
    clashes: list[tuple[Key, int]] = []
    for number, line in enumerate(theirs_lines[start:], start + 1):
        key = line_key(line)
        found = ours_index.has(key, line)
        if found is None:
            kept.append(line)
        elif found is False:
            clashes.append((key, number))
    if clashes:
        named = [
            f"{_describe(key)} has two different bodies "
            f"(ours line {_locate(ours_lines, key)}, theirs line {number})"
            for key, number in clashes[:MAX_NAMED]
        ]
        if len(clashes) > MAX_NAMED:
            named.append(f"and {len(clashes) - MAX_NAMED} more ids like these")
        return MergeResult(conflict_of_sides(ours, theirs, marker_size), False, named)

    data = terminated(ours) + join(kept)
    notes = []
    if len(kept) < len(theirs_lines) - start:
        problem = merge_problem(theirs, data)
        if problem is not None:
            notes.append(
                f"theirs line {problem[0]} is already in ours, but in a different order; each "
                "line is kept once, in ours' order, so if this is a merge commit, "
                "`git gasp check` (check 4, merge rule) will report it"
            )
    return MergeResult(data, True, notes=notes)
