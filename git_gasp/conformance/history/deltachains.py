"""The blobs of a store's packs (and loose objects) as nodes of delta chains, parsed
lazily, with byte access that never builds a version.

Each blob in a pack is a node: a full object (a root), or a delta against a base
node. A delta whose instructions copy base offset == target position from 0 for its
first k bytes proves ``target[:k] == base[:k]``; along a chain the proven agreements
combine by their minimum: every node knows its root and how many first bytes it
shares with it, and two nodes of one root share at least the least agreement on the
path between them (`_agreement`). Single bytes and byte ranges of a node are resolved
through the delta instructions down to an insert or a full object, whose content is
inflated at most once and kept, in bounded caches, as its bytes, or only as the
offsets of its newlines when big. The questions asked of them are `prover`'s.
"""

from __future__ import annotations

import bisect
from array import array
from collections import OrderedDict, namedtuple
from collections.abc import Iterable

from git_gasp.base.record import Record
from git_gasp.odb.deltas import BLOB, OFS_DELTA, REF_DELTA, Delta, PackFormatError, parse_delta
from git_gasp.odb.loose import ObjectRefused, peek, read_loose
from git_gasp.odb.packs import READ_ERRORS, Loc, PackFiles

_MAX_DEPTH = 10_000  # git's own limit is 4095; deeper (or cyclic) chains prove nothing
_DELTA_CACHE_BYTES = 16 << 20
_ROOT_CACHE_BYTES = 64 << 20
_KEEP_CONTENT = 8 << 20  # a full object this small is kept as its bytes, not its newlines
_KEEP_TAIL = 4 << 20  # of a bigger one, the last bytes read are kept (one at a time)
_RANGE_PIECES = 1 << 16  # a byte range more fragmented than this is read the ordinary way


class Node(namedtuple("Node", "length base prefix depth root shared")):
    """A pack entry's facts: its `length`; its `base` (a Loc, None for a full object, a
    root); `prefix`, its first bytes proven equal to the base's (0 for a root); its
    `depth` in the chain; the chain's `root` (a Loc); `shared`, its first bytes proven
    equal to the root's."""

    __slots__ = ()


class ProverStats(Record):
    """What the prover did: pairs proven or not, deltas parsed, roots inflated."""

    FIELDS = ("proven", "unproven", "deltas", "roots", "tails")

    def __init__(self, proven: int = 0, unproven: int = 0, deltas: int = 0, roots: int = 0,
                 tails: int = 0) -> None:
        self.proven, self.unproven, self.deltas, self.roots = proven, unproven, deltas, roots
        self.tails = tails  # merge parents proven kept as the result's last lines


class DeltaChains:
    """The delta chains of the blobs of one store's packs (`PackFiles`)."""

    def __init__(self, files: PackFiles) -> None:
        self._files = files
        self._nodes: dict[Loc, Node | None] = {}
        self._deltas: OrderedDict[Loc, Delta] = OrderedDict()
        self._delta_bytes = 0
        self._roots: OrderedDict[Loc, array | bytes] = OrderedDict()
        self._root_bytes = 0
        self._unreadable: set[Loc] = set()
        self._tail: tuple[Loc, int, bytes] | None = None  # the last bytes of a big root
        self.stats = ProverStats()

    def length(self, sha: bytes) -> int | None:
        """The length of blob `sha` from its pack entry or loose header, if known."""
        node = self._node_of(sha)
        return None if node is None else node[1].length

    def _agreement(self, a: Loc, b: Loc, need: int | None = None) -> int:
        """How many first bytes nodes `a` and `b` are proven to share: the least
        agreement on the path between them (0 for nodes of different roots). Given
        `need`, any count of at least `need` may be returned, and it stops early once
        below `need`."""
        na, nb = self._nodes[a], self._nodes[b]
        if na is None or nb is None or na.root != nb.root:
            return 0
        if need is not None:
            shared = min(na.shared, nb.shared)
            if shared >= need:
                return shared
        floor = need or 0
        ka, kb = na.length, nb.length
        while a != b and min(ka, kb) >= floor:
            if na.depth >= nb.depth:
                ka = min(ka, na.prefix)
                a = na.base  # type: ignore[assignment]
                na = self._nodes[a]  # type: ignore[assignment]
            else:
                kb = min(kb, nb.prefix)
                b = nb.base  # type: ignore[assignment]
                nb = self._nodes[b]  # type: ignore[assignment]
        return min(ka, kb)

    def _is_newline(self, loc: Loc, pos: int) -> bool | None:
        """Whether byte `pos` of node `loc` is b"\\n", through the delta instructions."""
        for _ in range(_MAX_DEPTH):
            node = self._nodes[loc]
            if node is None or pos >= node.length:
                return None
            if node.base is None:
                return self._root_newline(loc, pos)
            if pos < node.shared:
                loc = node.root
                continue
            if pos < node.prefix:
                loc = node.base
                continue
            delta = self._delta(loc)
            off, byte = delta.source(pos)
            if off < 0:
                return byte == 0x0A
            loc, pos = node.base, off
        return None

    def _range(self, loc: Loc, start: int, end: int) -> bytes | None:
        """Bytes [`start`, `end`) of node `loc`, resolved through the delta
        instructions down to inserts and full objects (None: so fragmented that
        reading the version would be cheaper)."""
        out: list[bytes] = []
        todo: list[bytes | tuple[Loc, int, int]] = [(loc, start, end)]
        steps = 0
        while todo:
            item = todo.pop()
            if isinstance(item, bytes):
                out.append(item)
                continue
            here, lo, hi = item
            steps += 1
            if steps > _RANGE_PIECES:
                return None
            node = self._nodes[here]
            if node is None or not 0 <= lo <= hi <= node.length:
                raise PackFormatError("a byte range outside its version")
            if node.base is None:
                out.append(self._root_range(here, lo, hi))
                continue
            if hi <= node.shared:
                todo.append((node.root, lo, hi))
                continue
            if hi <= node.prefix:
                todo.append((node.base, lo, hi))
                continue
            parts: list[bytes | tuple[Loc, int, int]] = []
            if lo < node.prefix:
                parts.append((node.base, lo, node.prefix))
                lo = node.prefix
            delta = self._delta(here)
            starts, ops = delta.starts, delta.ops
            i = bisect.bisect_right(starts, lo) - 1
            while i < len(starts) and starts[i] < hi:
                first = starts[i]
                off, length, at = ops[i]
                a, b = max(lo, first), min(hi, first + length)
                if off < 0:
                    parts.append(delta.data[at + a - first:at + b - first])
                else:
                    parts.append((node.base, off + a - first, off + b - first))
                i += 1
            todo.extend(reversed(parts))
        return b"".join(out)

    # ---- locating and parsing entries

    def _node_of(self, sha: bytes) -> tuple[Loc, Node] | None:
        try:
            loc = self._files.locate(sha)
        except READ_ERRORS:  # a lying index: proves nothing, reading the blob reports it
            return None
        if loc is None:
            return None
        node = self._node(loc)
        return None if node is None else (loc, node)

    def _node(self, loc: Loc) -> Node | None:
        """The node at `loc`, parsing its delta chain down to a known node or a root."""
        if loc in self._nodes:
            return self._nodes[loc]
        chain: list[tuple[Loc, tuple[int, Loc | None, Delta | None] | None]] = []
        on_chain: set[Loc] = set()
        cur: Loc | None = loc
        while cur is not None and cur not in self._nodes:
            if cur in on_chain or len(chain) > _MAX_DEPTH:
                chain.append((cur, None))  # a cycle or an absurd depth: prove nothing
                break
            on_chain.add(cur)
            try:
                parsed = self._parse(cur)
            except READ_ERRORS:
                parsed = None
            chain.append((cur, parsed))
            cur = None if parsed is None else parsed[1]
        for here, parsed in reversed(chain):
            self._nodes[here] = self._build(here, parsed)
        return self._nodes[loc]

    def _build(self, loc: Loc, parsed: tuple[int, Loc | None, Delta | None] | None
               ) -> Node | None:
        if parsed is None:
            return None
        length, base, delta = parsed
        if base is None:
            return Node(length, None, 0, 0, loc, length)
        below = self._nodes.get(base)
        if below is None or delta is None or delta.base_size != below.length:
            return None
        if delta.starts:
            self._keep_delta(loc, delta)
        return Node(length, base, delta.prefix, below.depth + 1, below.root,
                    min(delta.prefix, below.shared))

    def _parse(self, loc: Loc) -> tuple[int, Loc | None, Delta | None] | None:
        """(length, base location or None, parsed delta) of a blob entry; None if the
        entry is not a blob (or a delta whose base cannot be found)."""
        number, where = loc
        if number < 0:
            assert isinstance(where, bytes)
            kind, size = self._loose_header(where)
            return (size, None, None) if kind == BLOB else None
        kind, size = self._files.entry_head(loc)  # a full object: its size, not inflated
        if kind == BLOB:
            return size, None, None
        if kind not in (OFS_DELTA, REF_DELTA):
            return None
        entry = self._files.entry(loc)
        delta = parse_delta(b"".join(entry.decomp_chunks))
        self.stats.deltas += 1
        base = self._files.base_of(loc, entry)
        return (delta.target_size, base, delta) if base is not None else None

    def _loose_header(self, sha: bytes) -> tuple[int, int]:
        """(type number, declared size) of loose object `sha`, from its first bytes."""
        try:
            kind, size, _ = peek(self._files.loose_path(sha), f"loose object {sha.decode()}")
        except ObjectRefused as exc:
            raise PackFormatError(str(exc)) from None
        return kind, size

    # ---- bounded caches: parsed deltas, and the newlines of full objects

    def _delta(self, loc: Loc) -> Delta:
        delta = self._deltas.get(loc)
        if delta is not None:
            self._deltas.move_to_end(loc)
            return delta
        parsed = self._parse(loc)
        if parsed is None or parsed[2] is None:
            raise PackFormatError("delta vanished")
        self._keep_delta(loc, parsed[2])
        return parsed[2]

    def _keep_delta(self, loc: Loc, delta: Delta) -> None:
        cost = len(delta.data) + 48 * len(delta.ops)
        if cost > _DELTA_CACHE_BYTES // 4 or loc in self._deltas:
            return
        self._deltas[loc] = delta
        self._delta_bytes += cost
        while self._delta_bytes > _DELTA_CACHE_BYTES:
            _, old = self._deltas.popitem(last=False)
            self._delta_bytes -= len(old.data) + 48 * len(old.ops)

    def _root_newline(self, loc: Loc, pos: int) -> bool:
        lines = self._lines(loc)
        if isinstance(lines, bytes):
            return lines[pos] == 0x0A
        i = bisect.bisect_left(lines, pos)
        return i < len(lines) and lines[i] == pos

    def _lines(self, loc: Loc) -> array | bytes:
        """The newline offsets of root `loc`, from its content inflated (and checked)
        once; kept in a bounded cache."""
        lines = self._roots.get(loc)
        if lines is None:
            node = self._nodes[loc]
            assert node is not None and node.base is None
            if loc in self._unreadable:
                raise PackFormatError("an unreadable full object")
            try:  # a small object's bytes; a big one streamed: the offsets of its newlines
                found = None if node.length <= _KEEP_CONTENT else _newlines(
                    self._root_content(loc, node.length), node.length)
                lines = found if found is not None else b"".join(
                    self._root_content(loc, node.length))  # (very short lines: the bytes)
            except READ_ERRORS:
                self._unreadable.add(loc)
                raise
            self.stats.roots += 1
            cost = len(lines) * lines.itemsize if isinstance(lines, array) else len(lines)
            self._roots[loc] = lines
            self._root_bytes += cost
            while self._root_bytes > _ROOT_CACHE_BYTES and len(self._roots) > 1:
                _, old = self._roots.popitem(last=False)
                self._root_bytes -= len(old) * old.itemsize if isinstance(old, array) \
                    else len(old)
        else:
            self._roots.move_to_end(loc)
        return lines

    def _root_range(self, loc: Loc, start: int, end: int) -> bytes:
        """Bytes [`start`, `end`) of root `loc` (a big one streamed up to `end`)."""
        lines = self._lines(loc)  # inflated and checked whole once
        if isinstance(lines, bytes):
            return lines[start:end]
        node = self._nodes[loc]
        assert node is not None
        tail = self._tail
        if tail is not None and tail[0] == loc and start >= tail[1]:
            return tail[2][start - tail[1]:end - tail[1]]
        if start >= node.length - _KEEP_TAIL:  # a merge's new lines: keep the last bytes
            first = max(0, node.length - _KEEP_TAIL)
            kept = self._root_slice(loc, node.length, first, node.length)
            self._tail = (loc, first, kept)
            return kept[start - first:end - first]
        return self._root_slice(loc, node.length, start, end)

    def _root_slice(self, loc: Loc, length: int, start: int, end: int) -> bytes:
        """Bytes [`start`, `end`) of root `loc`, streamed from its start."""
        out: list[bytes] = []
        pos = 0
        for piece in self._root_content(loc, length):
            if pos + len(piece) > start:
                out.append(piece[max(0, start - pos):end - pos])
            pos += len(piece)
            if pos >= end:
                break
        return b"".join(out)

    def _root_content(self, loc: Loc, length: int) -> Iterable[bytes]:
        """The content of root `loc` (checked to be `length` bytes), in pieces."""
        number, where = loc
        if number < 0:
            assert isinstance(where, bytes)
            what = f"loose object {where.decode()}"
            try:  # inflated no further than its header declares (odb.loose)
                got = read_loose(self._files.loose_path(where), what, limit=length)
            except ObjectRefused as exc:
                raise PackFormatError(str(exc)) from None
            if got is None or got[0] != BLOB or len(got[1]) != length:
                raise PackFormatError(f"{what} has the wrong size")
            return (got[1],)
        entry = self._files.entry(loc)
        if entry.pack_type_num != BLOB or entry.decomp_len != length:
            raise PackFormatError("a full object changed under the prover")
        return entry.decomp_chunks


def _newlines(pieces: Iterable[bytes], length: int) -> array | None:
    """The offsets of b"\\n" in the content `pieces` make (None when lines are so short
    that the offsets would take more room than the content)."""
    out = array("I" if length < 1 << 32 else "Q")
    budget = length // out.itemsize
    base = 0
    for piece in pieces:
        find = piece.find
        i = find(b"\n")
        while i >= 0:
            out.append(base + i)
            i = find(b"\n", i + 1)
        if len(out) > budget:
            return None  # the caller reads (and checks) the whole content instead
        base += len(piece)
    return out
