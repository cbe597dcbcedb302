"""Merge of `JOURNAL.md`: base, then ours' appended block, then theirs' appended block.

Journal lines are free text (blank lines repeat), so identity is the whole
appended block, not a line: a block theirs appended that ours already holds
(the same entry, or one ours extended) is not written twice.
"""

from __future__ import annotations

from git_gasp.merge.lines import (
    MergeResult,
    appended,
    conflict_of_sides,
    first_difference,
    terminated,
)


def merge_journal(base: bytes, ours: bytes, theirs: bytes, marker_size: int = 7) -> MergeResult:
    """Merge three versions of a journal; a side that does not extend base is a conflict."""
    o_add = appended(base, ours)
    t_add = appended(base, theirs)
    rewrites = [
        f"{name} rewrote the common base: {first_difference(base, side)}"
        for name, side, add in (("ours", ours, o_add), ("theirs", theirs, t_add))
        if add is None
    ]
    if rewrites:
        return MergeResult(conflict_of_sides(ours, theirs, marker_size), False, rewrites)
    assert o_add is not None and t_add is not None
    o_block, t_block = terminated(o_add), terminated(t_add)
    if not t_block or (b"\n" + t_block) in (b"\n" + o_block):
        tail = b""  # nothing new, or ours already holds theirs' block whole
    elif t_block.startswith(o_block):
        tail = t_block[len(o_block) :]  # theirs extended ours' block: add only the rest
    else:
        tail = t_block
    return MergeResult(terminated(ours) + tail, True)
