"""Merge of `JOURNAL.md`: base, then ours' appended block, then theirs' appended block.

Journal lines are free text (blank lines repeat), so identity is the whole
appended block, not a line: a block theirs appended that ours already holds
(the same entry, or one ours extended) is not written twice. Theirs must
extend base; ours need not (a cherry-pick's base may never have been in ours),
and what ours holds is kept as it is.
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
    """Merge three versions of a journal; theirs not extending base is a conflict."""
    t_add = appended(base, theirs)
    if t_add is None:
        problem = f"theirs rewrote the common base: {first_difference(base, theirs)}"
        return MergeResult(conflict_of_sides(ours, theirs, marker_size), False, [problem])
    o_add = appended(base, ours)
    o_block = terminated(ours if o_add is None else o_add)
    t_block = terminated(t_add)
    if not t_block or (b"\n" + t_block) in (b"\n" + o_block):
        tail = b""  # nothing new, or ours already holds theirs' block whole
    elif t_block.startswith(o_block):
        tail = t_block[len(o_block) :]  # theirs extended ours' block: add only the rest
    else:
        tail = t_block
    return MergeResult(terminated(ours) + tail, True)
