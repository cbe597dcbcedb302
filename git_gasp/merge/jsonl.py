"""Union merge of JSONL files (`state/events.jsonl`, `facts.jsonl`) by line identity.

A line's identity is its JSON `id` string, else its exact bytes. The result is
ours, then theirs' new lines (those not in base) that ours does not already
hold, in theirs' order. Theirs losing or changing a base line, ours changing
the body of a base id, or a new theirs line whose id ours carries with another
body is a conflict. Ours may lack base lines: a cherry-pick's or `rebase
--onto`'s base need not be in ours (check 4 and the guard police ours' own
history). One pass over each version with hash maps: linear time.
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

Key = str | bytes  # an `id` string, or the line's bytes when it has none
MAX_NAMED = 10  # conflicts named one by one before "and N more"


def line_key(line: bytes) -> Key:
    """A line's identity: its JSON `id` when that is a string, else its exact bytes.

    Canonical events and facts start with `{"id":"…",`; such an id without escapes
    is read straight from the bytes (the identity only, not a validation: checks 1
    and 7 judge the line). Anything else is parsed leniently.
    """
    if line.startswith(b'{"id":"'):
        end = line.find(b'"', 7)
        if end > 7 and line[end + 1 : end + 2] == b"," and line.find(b"\\", 7, end) < 0:
            try:
                return line[7:end].decode()
            except UnicodeDecodeError:
                pass
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
    """The lines of one version by identity; an id may carry several bodies (a bad log)."""

    __slots__ = ("lines", "keys", "first", "extra")

    def __init__(self, lines: list[bytes]) -> None:
        keys = [line_key(line) for line in lines]
        first: dict[Key, bytes] = {}
        extra: set[tuple[Key, bytes]] = set()
        setdefault = first.setdefault
        for key, line in zip(keys, lines, strict=True):
            had = setdefault(key, line)
            if had is not line and had != line:
                extra.add((key, line))
        self.lines, self.keys, self.first, self.extra = lines, keys, first, extra

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


def _base_problem(base: LineIndex, side: LineIndex, *, missing_too: bool) -> str | None:
    """The first base line `side` changed (or, with `missing_too`, lacks), or None."""
    for number, (key, line) in enumerate(zip(base.keys, base.lines, strict=True), 1):
        found = side.has(key, line)
        if found is False:
            return f"base line {number} ({_describe(key)}) was changed"
        if found is None and missing_too:
            return f"base line {number} ({_describe(key)}) is missing"
    return None


def _locate(index: LineIndex, key: Key) -> int:
    """1-based number of the first line of `index` with identity `key` (0 if none)."""
    for number, had in enumerate(index.keys, 1):
        if had == key:
            return number
    return 0


def merge_jsonl(base: bytes, ours: bytes, theirs: bytes, marker_size: int = 7) -> MergeResult:
    """Merge three versions of a JSONL file; see the module docstring for the rules."""
    ours_index = LineIndex(split(ours))
    theirs_lines = split(theirs)
    rewrites: list[str] = []
    t_add = appended(base, theirs)
    if t_add is not None:  # the usual case: theirs' new lines follow base
        first = len(theirs_lines) - len(split(t_add))
        candidates = list(enumerate(theirs_lines[first:], first + 1))
        keys = [line_key(line) for _, line in candidates]
        base_index = None
    else:  # theirs reorders base (a criss-cross virtual base) or rewrote it
        base_index = LineIndex(split(base))
        theirs_index = LineIndex(theirs_lines)
        problem = _base_problem(base_index, theirs_index, missing_too=True)
        if problem is not None:
            rewrites.append(f"theirs rewrote the common base: {problem}")
        pairs = zip(theirs_index.keys, theirs_lines, strict=True)
        new = [
            (number, key, line)
            for number, (key, line) in enumerate(pairs, 1)
            if base_index.has(key, line) is not True
        ]
        candidates = [(number, line) for number, _, line in new]
        keys = [key for _, key, _ in new]
    ours_extends = appended(base, ours) is not None
    if not ours_extends:
        base_index = base_index or LineIndex(split(base))
        problem = _base_problem(base_index, ours_index, missing_too=False)
        if problem is not None:
            rewrites.insert(0, f"ours rewrote the common base: {problem}")
    if rewrites:
        return MergeResult(conflict_of_sides(ours, theirs, marker_size), False, rewrites)

    kept: list[bytes] = []
    clashes: list[tuple[Key, int]] = []
    for key, (number, line) in zip(keys, candidates, strict=True):
        found = ours_index.has(key, line)
        if found is None:
            kept.append(line)
        elif found is False:
            clashes.append((key, number))
    if clashes:
        named = [
            f"{_describe(key)} has two different bodies "
            f"(ours line {_locate(ours_index, key)}, theirs line {number})"
            for key, number in clashes[:MAX_NAMED]
        ]
        if len(clashes) > MAX_NAMED:
            named.append(f"and {len(clashes) - MAX_NAMED} more ids like these")
        return MergeResult(conflict_of_sides(ours, theirs, marker_size), False, named)

    return MergeResult(terminated(ours) + join(kept), True)

