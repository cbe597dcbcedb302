"""Index files under the git dir: one per log blob id, raw 64-bit words and a checksum,
each either whole or a delta against the file of an older blob.

``<common git dir>/gasp/<prefix>-<rules>-<blob>.<suffix>`` holds a header line

    <magic> <format> <rules> <blob> <length> <lines> <first> <keys> <size>… <crc32>
    <byte order> <base> <base crc32> <base bytes> <depth> <stamp>

(one line, fields split by single spaces; the crc32 covers the rest of the line and the
body) then the sorted keys (``lineindex``) and the
offsets of lines `first`+1 … `lines` as raw words, then any further byte strings (one
size each). A whole entry has ``first`` 0 and base ``-`` (``- 0 0 0``). A delta holds
only what its lines add: the keys of lines after `first` and their offsets, plus the
extras in full; it names the file it extends by blob id, the crc32 of that file's body
and its size in bytes, so it is read over exactly that file (whose `lines` must be
`first`), and `depth` counts the deltas down to a whole entry. Loading resolves the
chain and gives the keys as `lineindex.Keys`, one run per file, so no key is copied or
merged; a save of an index grown from a loaded one writes a delta against the file it
came from, or, once the chain is `MAX_DEPTH` deep or its deltas reach `1/SPREAD` of
the whole entry's bytes, a whole entry again.

A blob id pins its content, so an entry never goes stale; the rules key changes
whenever what the entries record would change. Anything odd — unreadable, truncated,
wrong checksum, sizes or byte order, a missing or damaged base — counts as no entry
(`problem` says so when a file of ours was damaged); a base that was saved again since
(another crc32) only makes its deltas no entry. Every delta is summed on each load; the
chain's whole entry (the big file) only when its stamp (`stamps`) — inode, size, mtime, ctime,
which any write changes — is not the one the newest delta recorded when it last saw
the file checked (`_read` says when a stamp is kept); likewise a whole entry read as the
newest of its chain, whose note ``<file>.checked`` (written when it was last checked in
full, and touched instead of the file) holds the stamp it still has. No cheaper sum in the standard
library would do: adler32 is no faster than crc32 here, blake2 slower. Whole entries
are written durably (a crash cannot leave one with its stamp and other bytes), deltas
not. Writes are atomic; only the newest `keep` files are kept, with every file their
chains need. This is the one home of the format: the
guard's ``committed_log_cache`` and the checks' ``logstate_cache`` are two users of it.
"""

from __future__ import annotations

import mmap
import os
import sys
import zlib
from array import array
from time import time_ns as _time_ns
from typing import BinaryIO

from git_gasp.base.digest import is_object_id
from git_gasp.base.errors import GaspError
from git_gasp.base.fileops import AtomicFile
from git_gasp.base.files import open_file
from git_gasp.base.record import Record
from git_gasp.conformance.saved.lineindex import LINE_MASK, Keys, Offsets, flat, offset_words
from git_gasp.conformance.saved.stamps import CHECKED, checked_stamp, is_stamp, stamp_of, vouch

MAX_DEPTH = 16  # deltas in a chain before a whole entry is written again
SPREAD = 4  # ... or once the deltas' bytes reach a quarter of the whole entry's
MARGIN_NS = 3 * 10**9  # a file changed this recently may change again unseen by its stamp
_NONE = b"-"
_MAP_FROM = 1 << 16  # bytes: a smaller file is read


def _mapped(f: BinaryIO, size: int) -> bytes | mmap.mmap:
    """The file's bytes: a big one mapped, not read. A lookup touches a few pages of its
    keys instead of every page being copied in (twice, with the arrays built from it):
    page faults, not instructions, were most of a re-check's reading. Files here are
    only ever replaced (a new inode), never rewritten in place, so the mapping stays
    what it was when checked."""
    if size < _MAP_FROM:
        return f.read()
    return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


class Entry(Record):
    """One loaded index file (`keys`: an array, or `lineindex.Keys` when loaded or
    grown; `offsets`: one per line)."""

    FIELDS = ("length", "line_count", "keys", "offsets", "extras")

    def __init__(self, length: int, line_count: int, keys: array | Keys, offsets: array,
                 extras: list[bytes] | None = None) -> None:
        self.length, self.line_count = length, line_count  # bytes and lines of the log
        self.keys, self.offsets = keys, offsets
        self.extras = [] if extras is None else extras


class Link(Record):
    """One file of a loaded chain: where it is, what identifies its content (crc32 of
    the body, size in bytes), the lines it covers, how many key runs the chain holds up
    to it, its depth and the bytes of the deltas down to the whole entry."""

    FIELDS = ("path", "blob", "crc", "size", "lines", "runs", "depth", "spread", "whole",
              "stamp")

    def __init__(self, path: str, blob: bytes, crc: int, size: int, lines: int,
                 runs: int | None,
                 depth: int, spread: int, whole: int, stamp: bytes = _NONE) -> None:
        self.path, self.blob, self.crc, self.size = path, blob, crc, size
        self.lines, self.runs, self.depth = lines, runs, depth
        self.spread, self.whole = spread, whole  # deltas' bytes; the whole entry's
        self.stamp = stamp  # a whole entry's: its `stamp_of` when checked (or "-")


class _Head(Record):
    """A parsed header line."""

    FIELDS = ("rules", "blob", "length", "lines", "first", "sizes", "crc", "base",
              "base_crc", "base_size", "depth", "stamp", "signed")

    def __init__(self, rules: bytes, blob: bytes, length: int, lines: int, first: int,
                 sizes: list[int], crc: int, base: bytes | None, base_crc: int,
                 base_size: int, depth: int, stamp: bytes, signed: bytes) -> None:
        self.rules, self.blob, self.length, self.lines, self.first = \
            rules, blob, length, lines, first
        self.sizes, self.crc = sizes, crc  # sizes[0]: the keys' count
        self.signed = signed  # the header without its crc32 (which covers it too)
        self.base, self.base_crc, self.base_size, self.depth = base, base_crc, base_size, depth
        self.stamp = stamp  # a delta's: the `stamp_of` of its chain's whole entry, or "-"


def _delta_keys(keys: Keys, link: Link) -> array:
    """The keys of `keys`' lines after `link`'s file, sorted: the runs after those the
    chain holds up to it, or, for a file whose keys share a run with later ones (a middle
    delta), those of the runs after the whole entry's with a later line."""
    if link.runs is not None:
        return flat(Keys(keys.runs[link.runs:]))
    after = keys.origin[0].runs  # type: ignore[index] - the whole entry's link
    return array("Q", sorted(k for run in keys.runs[after:] for k in run
                             if k & LINE_MASK > link.lines))


def _number(text: bytes) -> int | None:
    return int(text) if text.isdigit() and len(text) <= 15 else None


class IndexFiles:
    """Entries named `<prefix>-<rules>-<blob>.<suffix>` in `<common_dir>/gasp/`, each with
    `extras` further byte strings after the keys and offsets."""

    def __init__(self, common_dir: str, *, magic: bytes, prefix: str, suffix: str,
                 rules: str, fmt: int, keep: int, extras: int = 0) -> None:
        self.dir = os.path.join(common_dir, "gasp")
        self.magic, self.prefix, self.suffix = magic, prefix, suffix
        self.rules, self.format, self.keep, self.extras = rules, fmt, keep, extras
        self.saved: set[str] = set()
        self.problem: str | None = None  # set when a file of ours was damaged
        self._ancestors: list[tuple[bytes, int]] | None = None

    def path(self, blob_id: bytes, rules: str | None = None) -> str:
        return os.path.join(self.dir, f"{self.prefix}-{self.rules if rules is None else rules}"
                                      f"-{blob_id.decode()}.{self.suffix}")

    def _parse(self, head: bytes, blob_id: bytes | None) -> _Head | None:
        """The header line `head` (with its newline) of `blob_id`'s file under the current
        rules (of any blob and rules when `blob_id` is None), or None."""
        fields = head[:-1].split(b" ") if head.endswith(b"\n") else []
        n = self.extras
        if len(fields) != 15 + n or fields[0] != self.magic \
                or fields[1] != b"%d" % self.format or fields[9 + n] != sys.byteorder.encode():
            return None
        rules, blob = fields[2], fields[3]
        if blob_id is None:
            if not is_object_id(blob) or not rules or not rules.isalnum():
                return None
        elif blob != blob_id or rules != self.rules.encode():
            return None
        numbers = [_number(x) for x in fields[4:9 + n]]
        tail = [_number(x) for x in fields[11 + n:14 + n]]
        stamp = fields[14 + n]
        if None in numbers or None in tail:
            return None
        length, lines, first, *sizes, crc = numbers
        base_crc, base_size, depth = tail
        base: bytes | None = fields[10 + n]
        if base == _NONE:
            base = None
            if first or depth or base_crc or base_size or stamp != _NONE:
                return None
        elif not is_object_id(base) or base == blob or not 0 < depth <= MAX_DEPTH \
                or not 0 < first <= lines or not (stamp == _NONE or is_stamp(stamp)):
            return None
        return _Head(rules, blob, length, lines, first, sizes, crc, base, base_crc, base_size,
                     depth, stamp, b" ".join(fields[:8 + n] + fields[9 + n:]))

    def _head(self, path: str, blob_id: bytes | None) -> _Head | None:
        try:
            with open_file(path) as f:
                head = f.readline(512)
        except OSError:
            return None
        return self._parse(head, blob_id)

    def header(self, blob_id: bytes) -> int | None:
        """The covered length of `blob_id`'s entry (header only), or None."""
        head = self._head(self.path(blob_id), blob_id)
        return None if head is None else head.length

    def load(self, blob_id: bytes, *, max_length: int | None = None) -> Entry | None:
        """The entry of blob `blob_id` (covering at most `max_length` bytes), or None."""
        chain: list[tuple[_Head, memoryview, int, bytes]] = []  # newest first
        blob, want = blob_id, None
        while True:
            found = self._read(blob, base=want is not None,
                               stamp=chain[0][0].stamp if chain else _NONE)
            if found is None:
                return None
            head, body, size, stamp = found
            if want is not None:
                newer = chain[-1][0]
                if (head.crc, size) != want:
                    return None  # saved again since the delta: not the file it extends
                if head.lines != newer.first or head.length > newer.length \
                        or head.depth != newer.depth - 1:
                    self.problem = "corrupt"
                    return None
            elif max_length is not None and head.length > max_length:
                return None
            chain.append((head, body, size, stamp))
            if head.base is None:
                break
            blob, want = head.base, (head.base_crc, head.base_size)
        return self._entry(chain, stamp)

    def _read(self, blob_id: bytes, *, base: bool,
              stamp: bytes) -> tuple[_Head, memoryview, int, bytes] | None:
        """The checked header and body of `blob_id`'s file, its size and its stamp as
        checked (or "-": too recent to vouch for it), or None (a problem noted when it
        is damaged, or missing though a delta needs it).

        A whole entry at the end of a chain whose newest delta holds the stamp the file
        still has is not summed again: it was checked (in full) when the delta was
        written, durably written before that, and any write to it since would have
        changed its ctime (the stamp is kept only for files last changed `MARGIN_NS`
        before they were checked, so that a change within the clock's granularity of
        the previous one cannot go unseen)."""
        path = self.path(blob_id)
        try:
            with open_file(path) as f:
                st = os.fstat(f.fileno())
                raw = _mapped(f, st.st_size)
        except FileNotFoundError:
            if base:
                self.problem = "corrupt"
            return None
        except OSError as exc:
            self.problem = f"unreadable ({exc.strerror})"
            return None
        cut = raw.find(b"\n", 0, 512) + 1
        head = self._parse(raw[:cut], blob_id) if cut else None
        body = memoryview(raw)[cut:]  # no copy of the words (nor, mapped, a read of them)
        now = stamp_of(st)
        if head is None or len(body) != 8 * (head.sizes[0] + head.lines - head.first) \
                + sum(head.sizes[1:]) or len(raw) != st.st_size:
            self.problem = "corrupt"
            return None
        vouched = stamp if base else checked_stamp(path) if head.base is None else _NONE
        if not (head.base is None and vouched == now) \
                and zlib.crc32(body, zlib.crc32(head.signed)) != head.crc:
            self.problem = "corrupt"
            return None
        if not base:  # the chain's newest file (its bases are kept for it): touched
            if head.base is not None:
                self._touch(path)
                now = _NONE
            else:  # through its note, so that the file keeps its stamp (and ages)
                if _time_ns() - st.st_ctime_ns < MARGIN_NS:
                    now = _NONE  # too recent to vouch for: the note only marks its use
                vouch(path, now)
        elif _time_ns() - st.st_ctime_ns < MARGIN_NS:
            now = _NONE
        return head, body, len(raw), now

    def _entry(self, chain: list[tuple[_Head, memoryview, int, bytes]],
               stamp: bytes) -> Entry | None:
        """The entry a resolved chain (newest first) holds, the keys one run per file
        (`stamp`: its whole entry's, as checked). The deltas' keys are sorted into one
        run (they are few), so that a lookup searches two runs, not one per file."""
        root = array("Q")
        added = array("Q")  # the deltas' keys
        offsets: memoryview | array = array("Q")  # the whole entry's, in place
        tail = array("Q")  # the deltas'
        links: list[Link] = []
        whole = spread = 0
        for head, body, size, _checked in reversed(chain):
            n_keys = head.sizes[0]
            at = 8 * (n_keys + head.lines - head.first)
            if head.base is None:  # the big runs: read in place (see `_mapped`)
                root = body[:8 * n_keys].cast("Q") if n_keys else array("Q")
                offsets = body[8 * n_keys:at].cast("Q") if at > 8 * n_keys else array("Q")
                whole = size
            else:
                tail.frombytes(body[8 * n_keys:at])
                added.frombytes(body[:8 * n_keys])
                spread += size
            links.append(Link(self.path(head.blob), head.blob, head.crc, size, head.lines,
                              None, head.depth, spread, whole,
                              stamp if head.base is None else _NONE))
        if len(chain) > 2:
            added = array("Q", sorted(added))
        keys = Keys((root, added), tuple(links))
        links[0].runs = 1 if root else 0  # runs up to a middle delta: None (`_delta_keys`)
        links[-1].runs = len(keys.runs)
        head, body, _size, _checked = chain[0]
        offsets = Offsets(offsets, tail)
        if head.lines and offsets[-1] > head.length:
            self.problem = "corrupt"
            return None
        at = 8 * (head.sizes[0] + head.lines - head.first)
        extras = []
        for size in head.sizes[1:]:
            extras.append(bytes(body[at:at + size]))
            at += size
        return Entry(head.length, head.lines, keys, offsets, extras)

    def save(self, blob_id: bytes, entry: Entry) -> bool:
        """Store `entry` for blob `blob_id` (best effort: a failure returns False): a delta
        against the file its keys were loaded from when that is still there and the
        chain is short, else whole."""
        if len(entry.extras) != self.extras:
            raise ValueError(f"{self.prefix} entries hold {self.extras} extra strings")
        link = self._base_for(blob_id, entry)
        if link is not None:
            keys = _delta_keys(entry.keys, link)  # type: ignore[arg-type] - a Keys
            offsets, first = offset_words(entry.offsets, link.lines), link.lines
            root = entry.keys.origin[0]  # type: ignore[union-attr] - a Keys' origin
            base = b"%s %d %d %d %s" % (link.blob, link.crc, link.size, link.depth + 1,
                                        root.stamp)
            grown = 8 * (len(keys) + len(offsets)) + sum(map(len, entry.extras)) + 256
            if (link.spread + grown) * SPREAD > link.whole:
                link = None  # the deltas would outgrow the whole entry: compact
        if link is None:
            keys, offsets, first = flat(entry.keys), offset_words(entry.offsets), 0
            base = b"- 0 0 0 -"
        parts = [memoryview(keys).cast("B"), offsets.cast("B"), *entry.extras]
        sizes = b" ".join(b"%d" % n for n in [len(keys), *map(len, entry.extras)])
        signed = b"%s %d %s %s %d %d %d %s" % (
            self.magic, self.format, self.rules.encode(), blob_id, entry.length,
            entry.line_count, first, sizes)
        tail = b"%s %s" % (sys.byteorder.encode(), base)
        crc = zlib.crc32(b"%s %s" % (signed, tail))
        for part in parts:
            crc = zlib.crc32(part, crc)
        head = b"%s %d %s\n" % (signed, crc, tail)
        path = self.path(blob_id)
        self._ancestors = None
        try:
            os.makedirs(self.dir, exist_ok=True)
            # a lost delta is rebuilt; a whole entry is durable, as its stamp assumes
            with AtomicFile(path, durable=link is None) as out:
                for part in (head, *parts):
                    out.write(part)
        except (OSError, GaspError):  # GaspError: UnsafePath, a link where the entry goes
            return False
        self.saved.add(path)
        if type(entry.keys) is Keys:  # a save of what grows from it extends this file
            size = len(head) + sum(map(len, parts))
            chain = () if link is None else entry.keys.origin[:entry.keys.origin.index(link) + 1]
            spread = 0 if link is None else link.spread + size
            entry.keys.origin = (*chain, Link(path, blob_id, crc, size, entry.line_count,
                                              len(entry.keys.runs), len(chain), spread,
                                              size if link is None else link.whole))
        self.prune()
        return True

    def _base_for(self, blob_id: bytes, entry: Entry) -> Link | None:
        """The file of the chain `entry`'s keys came from that a delta for `blob_id` can
        extend (the newest one of another blob, still there as loaded), or None."""
        keys = entry.keys
        links = keys.origin if type(keys) is Keys else None
        if not links or len(entry.offsets) != entry.line_count:
            return None
        for link in reversed(links):
            if link.blob == blob_id:
                continue  # saved again (new extras): a delta against its own base
            if link.path != self.path(link.blob) or link.depth >= MAX_DEPTH \
                    or link.lines > entry.line_count \
                    or (link.runs is not None and len(keys.runs) < link.runs):
                return None
            head = self._head(link.path, link.blob)
            try:
                size = os.stat(link.path).st_size
            except OSError:
                return None
            if head is None or head.crc != link.crc or size != link.size:
                return None
            return link
        return None

    def ancestors(self) -> list[tuple[bytes, int]]:
        """(blob id, covered length) of every entry under the current rules, newest first
        (read once, and again after a save)."""
        if self._ancestors is None:
            self._ancestors = self._read_ancestors()
        return list(self._ancestors)

    def _read_ancestors(self) -> list[tuple[bytes, int]]:
        out = []
        ours = f"{self.prefix}-{self.rules}-"
        for path in self._entries():
            name = os.path.basename(path)
            if not name.startswith(ours):
                continue
            blob_id = name[len(ours):].split(".", 1)[0].encode()
            length = self.header(blob_id)
            if length is not None:
                out.append((blob_id, length))
            else:
                self.problem = "corrupt"  # a file of ours whose header does not read
        return out

    def _entries(self) -> list[str]:
        """Every entry file of this prefix (any rules), ours first, newest first."""
        ours = f"{self.prefix}-{self.rules}-"
        try:
            names = [n for n in os.listdir(self.dir) if n.startswith(self.prefix + "-")
                     and n.endswith("." + self.suffix)]
        except OSError:
            return []
        stamped = []
        for name in names:
            path = os.path.join(self.dir, name)
            try:
                used = os.stat(path).st_mtime_ns
            except OSError:
                continue
            try:  # a checked whole entry is touched through its note
                used = max(used, os.stat(path + CHECKED).st_mtime_ns)
            except OSError:
                pass
            stamped.append((used, name.startswith(ours), path))
        stamped.sort(reverse=True)
        return [path for _, mine, path in stamped if mine] + \
            [path for _, mine, path in stamped if not mine]

    def prune(self) -> None:
        """Keep the newest `keep` entries (and every one saved by this run), and every
        file their chains need."""
        entries = self._entries()
        kept = set(entries[:self.keep]) | self.saved
        todo = list(kept)
        while todo:
            head = self._head(todo.pop(), None)
            if head is not None and head.base is not None:
                base = self.path(head.base, head.rules.decode())
                if base not in kept:
                    kept.add(base)
                    todo.append(base)
        for path in entries:
            if path not in kept:
                for doomed in (path, path + CHECKED):
                    try:
                        os.unlink(doomed)
                    except OSError:
                        pass

    @staticmethod
    def _touch(path: str) -> None:
        try:
            os.utime(path)
        except OSError:
            pass
