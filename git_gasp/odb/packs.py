"""The packs and loose objects of an on-disk sha1 repository, read raw: where an
object's entry is, and objects built from their entries.

Each pack is mapped once, and so is its index (``history_pack_index``), which finds an
entry; loose objects are inflated from their files, and deltas applied here. Reading an
object this way skips dulwich's per-object lookup machinery and its large cache of every
version built (a bounded cache here holds what chains are built from: the full
objects and intermediate versions, within 16 MiB or the largest object); an object
that is here but does not read cleanly is refused (`UnreadableObject`), naming it: a
loose object is inflated at most its declared size + 1 byte (`inflate.read_loose`), and
an entry that lies (a stream longer or shorter than its header says, a delta out of its
bounds or of the wrong size, a chain cyclic or too deep, a pack its index is not for) is
never handed to another reader to inflate whole.
"""

from __future__ import annotations

import binascii
import os
import zlib
from collections import OrderedDict, namedtuple
from collections.abc import Iterator

from git_gasp.base.fileops import NotARegularFile
from git_gasp.base.files import map_regular_file
from git_gasp.odb.errors import ObjectError
from git_gasp.odb.inflate import ObjectRefused, read_loose
from git_gasp.odb.pack_entries import (
    OFS_DELTA,
    REF_DELTA,
    EntryHeader,
    PackFormatError,
    apply_parsed,
    entry_header,
    inflate,
    inflate_chunks,
    parse_delta,
)
from git_gasp.odb.pack_index import PackIndex, PackIndexError, PackIndexRefused
from git_gasp.odb.repo import LazyDiskStore

Loc = tuple[int, int | bytes]  # (pack number, offset), or (-1, hex id) for a loose object
READ_ERRORS = (PackFormatError, OSError, zlib.error, ValueError, KeyError, IndexError)
_MAX_DEPTH = 10_000  # git's own limit is 4095; deeper (or cyclic) chains read nothing
_RESOLVED_BYTES = 16 << 20  # the cache's budget, or the largest object + 2 MiB if more
_GIT_REFUSES = "git refuses it, so the objects of its pack cannot be read (`git fsck` names it)"
_KEEP_RESULT = 2 << 20  # a built object this small is kept (a bigger one: only bases)


class UnreadableObject(ObjectError):
    """An object found in a pack or loose file that does not read cleanly."""


class _BaseOutside(Exception):
    """A REF_DELTA's base is not in the delta's pack."""


class _Pack(namedtuple("_Pack", "index buf oid_length")):
    """One mapped pack: its `PackIndex`, its mapped bytes and its object ids' length."""

    __slots__ = ()


def _pack_names(pack_dir: str) -> list[str]:
    """The names in `pack_dir` with both a ``.pack`` and an ``.idx`` (any name, as git
    and dulwich take them: ``git maintenance`` writes ``loose-*`` packs), newest first;
    [] when there is no such directory."""
    try:
        with os.scandir(pack_dir) as it:
            found = {e.name: e for e in it}
    except (FileNotFoundError, NotADirectoryError):
        return []
    names = [n[:-5] for n in found if n.endswith(".pack") and n[:-5] + ".idx" in found]

    def mtime(name: str) -> float:
        try:
            return found[name + ".pack"].stat().st_mtime
        except OSError:
            return 0.0
    return sorted(names, key=mtime, reverse=True)


def _mismatch(buf, index: PackIndex) -> str | None:
    """Why git's ``open_packed_git_1`` refuses the mapped pack `buf` with `index`: its
    object count or its checksum differs; None when it is the index's pack."""
    count = int.from_bytes(buf[8:12], "big")
    if count != len(index):
        return f"packfile claims to have {count} objects while index indicates {len(index)}"
    if len(buf) < 32 or buf[-20:] != index.pack_checksum():
        return "packfile does not match index (cut short or replaced)"
    return None


class PackFiles:
    """The mapped packs and the loose-object directory of one store."""

    def __init__(self, packs: list[_Pack], objects_dir: str | None,
                 mismatched: list[tuple[str, PackIndex]] | None = None,
                 refused: list[tuple[str, str]] | None = None) -> None:
        self._packs = packs
        self._mismatched = mismatched or []  # (name, index) of packs not matching it
        self.refused = refused or []  # (path, why) of each index git refuses (not mapped)
        self.objects_dir = objects_dir
        self._where: dict[bytes, Loc | None] = {}
        self._resolved: OrderedDict[Loc, tuple[int, bytes]] = OrderedDict()
        self._resolved_bytes = 0
        self._budget = _RESOLVED_BYTES

    @classmethod
    def for_store(cls, store: object) -> PackFiles | None:
        """The packs of an on-disk sha1 store: a `store.gitrepo.LazyDiskStore` or a
        dulwich ``DiskObjectStore`` (None for any other kind of store)."""
        if isinstance(store, LazyDiskStore):
            return cls.for_objects_dir(store.path)
        from dulwich.object_store import DiskObjectStore  # already loaded: `store` is one

        if not isinstance(store, DiskObjectStore) or getattr(
                getattr(store, "object_format", None), "oid_length", 20) != 20:
            return None  # sha256 object ids: read the ordinary way
        return cls.for_objects_dir(os.fspath(store.path))

    @classmethod
    def for_objects_dir(cls, objects_dir: str) -> PackFiles:
        """The packs and loose objects under a sha1 repository's objects directory. An
        index git refuses (`pack_index.validate`, or not a regular file) is in `refused`;
        a pack that does not map or read cleanly is skipped: its objects are read raw
        through the store."""
        packs: list[_Pack] = []
        mismatched: list[tuple[str, PackIndex]] = []
        refused: list[tuple[str, str]] = []
        pack_dir = os.path.join(objects_dir, "pack")
        for name in _pack_names(pack_dir):
            base = os.path.join(pack_dir, name)
            try:
                index = PackIndex(base + ".idx")
            except PackIndexRefused as exc:
                refused.append((exc.path, f"{exc.why}; {_GIT_REFUSES}"))
                continue
            except NotARegularFile:
                refused.append((base + ".idx", "a symbolic link or not a regular file: no "
                                "pack index is read through a link (`git repack -a -d` "
                                "writes a real one)"))
                continue
            except (PackIndexError, OSError):
                continue
            try:
                buf = map_regular_file(base + ".pack")
            except (OSError, NotARegularFile):
                buf = None
            if buf is None or buf[:4] != b"PACK":
                if buf is not None:
                    buf.close()
                index.close()
                continue
            why = _mismatch(buf, index)
            if why:
                buf.close()  # git does not read a pack its index is not for: refused
                mismatched.append((name, index))
                refused.append((base + ".idx", f"{why}; {_GIT_REFUSES}"))
                continue
            index.pack_size = len(buf)
            packs.append(_Pack(index, buf, 20))
        return cls(packs, objects_dir, mismatched, refused)

    @property
    def packs(self) -> int:
        """How many packs are mapped."""
        return len(self._packs)

    def close(self) -> None:
        for pack in self._packs:
            pack.buf.close()
            pack.index.close()
        for _name, index in self._mismatched:
            index.close()
        self._packs, self._mismatched = [], []
        self._resolved.clear()

    # ---- locating entries

    def locate(self, sha: bytes) -> Loc | None:
        """Where object `sha` (hex) is: the first pack holding it, else loose; None if
        nowhere."""
        if sha in self._where:
            return self._where[sha]
        found: Loc | None = None
        for number, pack in enumerate(self._packs):
            try:
                found = number, pack.index.object_offset(sha)
                break
            except KeyError:  # not here (PackIndexRefused: an offset outside its table
                continue  # or its pack, raised)
        if found is None and self.objects_dir is not None and len(sha) == 40:
            if os.path.isfile(self.loose_path(sha)):
                found = -1, sha
        self._where[sha] = found
        return found

    def loose_path(self, sha: bytes) -> str:
        assert self.objects_dir is not None
        return os.path.join(self.objects_dir, os.fsdecode(sha[:2]), os.fsdecode(sha[2:]))

    def header(self, loc: Loc) -> EntryHeader:
        """The header of the pack entry at `loc`."""
        number, where = loc
        assert isinstance(where, int)
        pack = self._packs[number]
        return entry_header(pack.buf, where, pack.oid_length)

    def entry_data(self, loc: Loc, head: EntryHeader) -> bytes:
        """What the entry's zlib stream inflates to (the object, or the delta)."""
        return inflate(self._packs[loc[0]].buf, head.data, head.size)

    def entry_chunks(self, loc: Loc, head: EntryHeader) -> Iterator[bytes]:
        """`entry_data` in pieces of at most 1 MiB (checked when they run out)."""
        return inflate_chunks(self._packs[loc[0]].buf, head.data, head.size)

    def base_of(self, loc: Loc, head: EntryHeader) -> Loc | None:
        """The location of a delta entry's base, in its own pack (as git and dulwich
        read packs: a REF_DELTA whose base is elsewhere, as in a thin pack nothing
        completed, reads as missing, so it proves and builds nothing here either)."""
        if head.type_num == OFS_DELTA:
            assert isinstance(head.base, int)
            return loc[0], head.base
        assert isinstance(head.base, bytes)
        try:
            return loc[0], self._packs[loc[0]].index.object_offset(binascii.hexlify(head.base))
        except KeyError:  # not in this pack
            return None

    # ---- small objects

    def read(self, sha: bytes) -> tuple[int, bytes] | None:
        """(type number, content) of object `sha` (hex); None when it is in no mapped
        pack and not loose here; UnreadableObject when it is but does not read cleanly."""
        what = f"object {sha.decode()}"
        try:
            loc = self.locate(sha)
        except PackIndexRefused as exc:
            raise UnreadableObject(f"{what} is unreadable ({exc})") from None
        if loc is None:
            for name, index in self._mismatched:
                try:
                    index.object_offset(sha)
                except Exception:  # noqa: BLE001 - KeyError: not in it
                    continue
                raise UnreadableObject(f"{what} is in pack {name}, which does not match its "
                                       "index (cut short or replaced)")
            return None
        try:
            got = read_loose(self.loose_path(sha), what) if loc[0] < 0 else self._resolve(loc)
        except ObjectRefused as exc:  # it lies: no other reader inflates it again
            raise UnreadableObject(str(exc)) from None
        except _BaseOutside:  # as git and dulwich read a thin pack nothing completed
            raise UnreadableObject(f"object {sha.decode()} is missing (a delta on a base "
                                   "outside its pack)") from None
        except READ_ERRORS as exc:
            raise UnreadableObject(f"object {sha.decode()} is unreadable ({exc})") from None
        if got is None:
            raise UnreadableObject(f"object {sha.decode()} is unreadable (a corrupt object "
                                   "or a delta chain that does not resolve)")
        return got

    def _resolve(self, loc: Loc) -> tuple[int, bytes] | None:
        chain: list[tuple[Loc, bytes]] = []  # (location, its delta), newest first
        seen: set[Loc] = set()
        cur: Loc | None = loc
        while True:
            if cur is None:
                raise _BaseOutside
            if cur[0] < 0:
                return None
            if cur in seen or len(chain) > _MAX_DEPTH:
                raise PackFormatError(f"its delta chain is cyclic or deeper than {_MAX_DEPTH}")
            seen.add(cur)
            hit = self._resolved.get(cur)
            if hit is not None:
                self._resolved.move_to_end(cur)
                type_num, data = hit
                break
            head = self.header(cur)
            if head.type_num not in (OFS_DELTA, REF_DELTA):
                type_num, data = head.type_num, self.entry_data(cur, head)
                self._keep(cur, type_num, data)
                break
            chain.append((cur, self.entry_data(cur, head)))
            cur = self.base_of(cur, head)
        for here, delta in reversed(chain):
            data = self._apply(data, delta)
            if here != loc or len(data) <= _KEEP_RESULT:
                self._keep(here, type_num, data)  # what later chains are built from
        return type_num, data

    def _apply(self, base: bytes, delta: bytes) -> bytes:
        """`delta` applied to `base` (PackFormatError when it does not apply)."""
        return apply_parsed(base, parse_delta(delta))

    def _keep(self, loc: Loc, type_num: int, data: bytes) -> None:
        if loc in self._resolved:
            return
        self._budget = max(self._budget, len(data) + _KEEP_RESULT)
        self._resolved[loc] = (type_num, data)
        self._resolved_bytes += len(data)
        while self._resolved_bytes > self._budget and len(self._resolved) > 1:
            _, (_t, old) = self._resolved.popitem(last=False)
            self._resolved_bytes -= len(old)
