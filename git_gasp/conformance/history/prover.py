"""Proving one-parent appends from the structure of pack deltas, without building
the versions (over the nodes of `deltachains`).

git stores the versions of an append-only file as deltas (an old version as a prefix
copy of a newer one, or a new one as the old one plus an insert), so the chains relate
hundreds of versions to a few full objects, and two nodes of one root share at least
the least agreement on the path between them. "Old is a prefix of new" is then a
matter of lengths; the newline rule needs single bytes, resolved through the delta
instructions down to an insert or a full object.

A merge is proven the same way (`proves_tails`): byte ranges of a version are
resolved through the delta instructions, down to inserts and full objects, so a
parent's own lines (past the whole lines it shares with the parent the result
extends) and the result's last bytes are read without building either version.

A pair is proven only when every entry from either version down to its root
parsed and checked cleanly (sizes, copy ranges, a base in the same pack) and the
root inflated cleanly: reading the versions, as the content comparison would, could
not have failed. Nothing here reports a failure: a pair it does not prove goes back
to the content comparison, which decides and describes it.
"""

from __future__ import annotations

from git_gasp.conformance.history.deltachains import DeltaChains
from git_gasp.odb.packs import READ_ERRORS, Loc
from git_gasp.protocol.appendonly import common_prefix_len

_COMPARE_WINDOW = 256  # bytes compared at first past the proven shared start
_LINE_WINDOW = 4096  # bytes read at a time looking back for a line start
_LINE_SEARCH = 1 << 20  # no line start this far back: not the usual merge shape


class PackProver(DeltaChains):
    """Proves "new extends old" (the one-parent rule) from the packs of one store."""

    # ---- the question

    def proves(self, old: bytes, new: bytes) -> bool:
        """True if blob `new` provably extends blob `old` under the one-parent rule
        (starts with it; an unterminated last line of `old` is not extended)."""
        ok = self._proves(old, new)
        if ok:
            self.stats.proven += 1
        else:
            self.stats.unproven += 1
        return ok

    def _proves(self, old: bytes, new: bytes) -> bool:
        c = self._node_of(new)
        if c is None or c[0][0] < 0:  # a loose blob shares no delta: its content decides
            return False
        p = self._node_of(old)
        if p is None:
            return False
        (ploc, pnode), (cloc, cnode) = p, c
        n = pnode.length
        if n and (cnode.length <= n or self._agreement(ploc, cloc, n) < n):
            return False
        try:
            # Every delta from either version down to its root parsed cleanly; the roots
            # must inflate cleanly too (once each), so that reading either version
            # (which the content comparison would do) cannot fail where this proves.
            self._lines(pnode.root)
            self._lines(cnode.root)
            if n == 0:
                return True
            last = self._is_newline(ploc, n - 1)
            return last is True or (last is False and self._is_newline(cloc, n) is True)
        except READ_ERRORS:
            return False

    # ---- merges: a parent's own lines as the result's last lines

    def proves_tails(self, anchor: bytes, others: list[bytes], result: bytes) -> bool:
        """True if the lines of each blob of `others` past the whole lines it is proven
        to share with blob `anchor` are lines of blob `result` past that start: the
        `others`' own lines, one after another, end `result` (each terminated there
        when it is not, unless last).

        With `result` extending `anchor` under the one-parent rule, that keeps every
        line of every other in `result` as often as it occurs, past the start all
        parents share: the merge rule (`protocol.appendonly.merge_result_problem`).
        Only those bytes are read, through the delta instructions. It is the merge
        driver's result (the first parent, then the second one's new lines), and git's
        octopus merge of such results.
        """
        ok = self._proves_tails(anchor, others, result)
        if ok:
            self.stats.tails += 1
        return ok

    def _proves_tails(self, anchor: bytes, others: list[bytes], result: bytes) -> bool:
        a, r = self._node_of(anchor), self._node_of(result)
        nodes = [self._node_of(sha) for sha in others]
        if a is None or r is None or None in nodes:
            return False
        aloc, (rloc, rnode) = a[0], r
        try:
            for _loc, node in [a, r, *nodes]:  # type: ignore[misc]
                self._lines(node.root)  # reading them could not fail (above)
            tails: list[tuple[int, bytes]] = []  # (where a line of both starts, the rest)
            for oloc, onode in nodes:  # type: ignore[misc]
                start = self._line_start(oloc, self._common_start(
                    aloc, oloc, min(a[1].length, onode.length)))
                own = None if start is None else self._range(oloc, start, onode.length)
                if own is None:
                    return False
                tails.append((start, own))
            end = rnode.length
            for start, own in reversed(tails):
                if not own:
                    continue
                # `result` agrees with `anchor`, hence the other, before `start`: a line
                # starts there; past it, a line starts after a newline.
                gap = 0  # an unterminated last line of the other may be terminated here
                if not own.endswith(b"\n") and end:
                    last = self._range(rloc, end - 1, end)
                    if last == b"\n":
                        gap = 1
                    elif end != rnode.length:
                        return False
                at = end - gap - len(own)
                if at < start:
                    return False
                got = self._range(rloc, at - 1 if at > start else at, end)
                if got is None:
                    return False
                if at > start:
                    if got[0] != 0x0A:
                        return False
                    got = got[1:]
                if got[:len(own)] != own:
                    return False
                end = at
            return True
        except READ_ERRORS:
            return False

    def _common_start(self, a: Loc, b: Loc, limit: int) -> int:
        """How many first bytes (at most `limit`) nodes `a` and `b` are known to share:
        proven from the deltas (`_shared`), then compared a window at a time past that
        (a delta need not copy what its base shares with it)."""
        known = self._agreement(a, b)
        window = _COMPARE_WINDOW
        while known < limit and window <= _LINE_SEARCH:
            end = min(limit, known + window)
            x, y = self._range(a, known, end), self._range(b, known, end)
            if x is None or y is None:
                break
            same = common_prefix_len(x, y)
            known += same
            if same < len(x):
                break
            window *= 4
        return known

    def _line_start(self, loc: Loc, end: int) -> int | None:
        """The last offset <= `end` where a line of node `loc` starts (None: not within
        `_LINE_SEARCH` bytes)."""
        window = _LINE_WINDOW
        while end > 0 and window <= _LINE_SEARCH:
            lo = max(0, end - window)
            data = self._range(loc, lo, end)
            if data is None:
                return None
            i = data.rfind(b"\n")
            if i >= 0:
                return lo + i + 1
            end, window = lo, window * 2
        return 0 if end == 0 else None

