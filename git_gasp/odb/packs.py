"""The packs and loose objects of an on-disk sha1 repository, read through dulwich:
where an object's entry is, its entry as dulwich unpacks it, and objects built from
their entries.

Each pack's index is dulwich's (``load_pack_index``), opened after the checks git makes
(`packcheck`: an index git refuses, or a pack its index is not for, is in `refused`,
never read), and only when the first object is wanted from a pack: until then a loose
copy is read first, so a walk of new loose objects does not load ``dulwich.pack``
(15-30 ms of imports). The pack is mapped once (`base.files`). An entry is
dulwich's ``UnpackedObject`` from ``unpack_object_at``, inflated no further than the
size its header declares, fed to zlib in slices of 16 KiB (with dulwich's default of
64 KiB, zlib copied the rest of each slice after every small object); deltas are
applied by dulwich's ``apply_delta``. The chain walk is here, so that a chain cyclic
or too deep, or a REF_DELTA whose base is outside its pack, is refused naming the
object rather than followed; a bounded cache holds what chains are built from (the
full objects and intermediate versions, within 16 MiB or the largest object). Loose
objects: `loose.read_loose`.

dulwich's public API has no entry header without its inflated data
(``_decode_object_header`` is private): `entry_head` decodes the bytes dulwich's
``take_msb_bytes_at`` reads, so the prover learns a full object's size without
inflating it.
"""

from __future__ import annotations

import os
import zlib
from collections import OrderedDict, namedtuple
from typing import TYPE_CHECKING

from git_gasp.base.files import map_regular_file
from git_gasp.odb.deltas import OFS_DELTA, REF_DELTA, PackFormatError
from git_gasp.odb.errors import ObjectError
from git_gasp.odb.loose import ObjectRefused, read_loose
from git_gasp.odb.packcheck import mismatch, refusal

if TYPE_CHECKING:
    from dulwich.pack import PackIndex, UnpackedObject

Loc = tuple[int, int | bytes]  # (pack number, offset), or (-1, hex id) for a loose object
READ_ERRORS = (PackFormatError, OSError, zlib.error, ValueError, KeyError, IndexError,
               AssertionError)  # dulwich asserts on an entry that is not one
_MAX_DEPTH = 10_000  # git's own limit is 4095; deeper (or cyclic) chains read nothing
_RESOLVED_BYTES = 16 << 20  # the cache's budget, or the largest object + 2 MiB if more
_GIT_REFUSES = "git refuses it, so the objects of its pack cannot be read (`git fsck` names it)"
_KEEP_RESULT = 2 << 20  # a built object this small is kept (a bigger one: only bases)
_ENTRIES_KEPT = 4  # unpacked entries kept: a size asked, then the content
_SLICE = 1 << 14  # compressed bytes fed to zlib at a time (dulwich's default: 64 KiB)


class UnreadableObject(ObjectError):
    """An object found in a pack or loose file that does not read cleanly."""


class _BaseOutside(Exception):
    """A REF_DELTA's base is not in the delta's pack."""


class _Pack(namedtuple("_Pack", "index buf")):
    """One opened pack: dulwich's `PackIndex` and the mapped pack."""

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


def _open(base: str):
    """dulwich's index of the pack `base` and the pack mapped, None when either does
    not open."""
    from dulwich.object_format import SHA1
    from dulwich.pack import load_pack_index

    try:
        index = load_pack_index(base + ".idx", SHA1)
    except Exception:  # noqa: BLE001 - not an index dulwich reads: its objects stay unread
        return None
    try:
        buf = map_regular_file(base + ".pack")
    except OSError:
        buf = None
    if buf is None or buf[:4] != b"PACK":
        if buf is not None:
            buf.close()
        index.close()
        return None
    return buf, index


class _Reader(namedtuple("_Reader", "unpack_object_at take_msb_bytes_at apply_delta hash_func")):
    """dulwich's functions that read pack entries, imported once when the packs open
    (not once per entry: ~1 µs each, thousands of entries a walk)."""

    @classmethod
    def load(cls) -> _Reader:
        from dulwich.object_format import SHA1
        from dulwich.pack import apply_delta, take_msb_bytes_at, unpack_object_at

        return cls(unpack_object_at, take_msb_bytes_at, apply_delta, SHA1.hash_func)


class PackFiles:
    """The packs and the loose-object directory of one store, read through dulwich."""

    def __init__(self, bases: list[str], objects_dir: str | None,
                 mismatched: list[str] | None = None,
                 refused: list[tuple[str, str]] | None = None) -> None:
        self._bases = bases  # the packs git reads, opened through dulwich on first need
        self._opened: list[_Pack] | None = None
        self._reader: _Reader | None = None  # dulwich's entry functions, once imported
        self._mismatched_bases = mismatched or []  # packs not matching their index
        self._mismatched: list[tuple[str, PackIndex]] | None = None
        self.refused = refused or []  # (path, why) of each index git refuses (not read)
        self.objects_dir = objects_dir
        self._where: dict[bytes, Loc | None] = {}
        self._entries: OrderedDict[Loc, UnpackedObject] = OrderedDict()
        self._resolved: OrderedDict[Loc, tuple[int, bytes]] = OrderedDict()
        self._resolved_bytes = 0
        self._budget = _RESOLVED_BYTES

    @classmethod
    def for_store(cls, store: object) -> PackFiles | None:
        """The packs of an on-disk sha1 store: a `odb.gitdirs.LazyDiskStore` or a dulwich
        ``DiskObjectStore`` (None for any other kind of store)."""
        from git_gasp.odb.gitdirs import LazyDiskStore

        if isinstance(store, LazyDiskStore):  # (dulwich.object_store not imported)
            return cls.for_objects_dir(store.path)
        from dulwich.object_store import DiskObjectStore

        if not isinstance(store, DiskObjectStore) or getattr(
                getattr(store, "object_format", None), "oid_length", 20) != 20:
            return None  # sha256 object ids: read the ordinary way
        return cls.for_objects_dir(os.fspath(store.path))

    @classmethod
    def for_objects_dir(cls, objects_dir: str) -> PackFiles:
        """The packs and loose objects under a sha1 repository's objects directory. An
        index git refuses (`packcheck.refusal`) is in `refused`; a pack dulwich does not
        open is skipped: its objects are read raw through the store."""
        bases: list[str] = []
        mismatched: list[str] = []
        refused: list[tuple[str, str]] = []
        pack_dir = os.path.join(objects_dir, "pack")
        for name in _pack_names(pack_dir):
            base = os.path.join(pack_dir, name)
            try:
                why = refusal(base + ".idx")
            except OSError:
                continue
            if why is not None:
                refused.append((base + ".idx", f"{why}; {_GIT_REFUSES}"))
                continue
            try:
                why = mismatch(base)
            except OSError:
                continue  # not a pack: its objects are read raw through the store
            if why:  # git does not read a pack its index is not for: refused
                mismatched.append(base)
                refused.append((base + ".idx", f"{why}; {_GIT_REFUSES}"))
                continue
            bases.append(base)
        return cls(bases, objects_dir, mismatched, refused)

    @property
    def packs(self) -> int:
        """How many packs git reads here (a pack dulwich then does not open reads
        nothing)."""
        return len(self._bases)

    @property
    def _packs(self) -> list[_Pack]:
        """The packs opened through dulwich, on the first object read from a pack: a
        walk that reads only loose objects does not load ``dulwich.pack``."""
        if self._opened is None:
            self._reader = _Reader.load()
            self._opened = [_Pack(opened[1], opened[0]) for opened in map(_open, self._bases)
                            if opened is not None]
        return self._opened

    def _indexes_mismatched(self) -> list[tuple[str, PackIndex]]:
        """(name, dulwich's index) of each pack not matching its index, loaded when an
        object is found nowhere else (to name the pack that holds it)."""
        if self._mismatched is None:
            from dulwich.object_format import SHA1
            from dulwich.pack import load_pack_index

            self._mismatched = []
            for base in self._mismatched_bases:
                try:
                    index = load_pack_index(base + ".idx", SHA1)
                except Exception:  # noqa: BLE001 - not an index dulwich reads
                    continue
                self._mismatched.append((os.path.basename(base), index))
        return self._mismatched

    def close(self) -> None:
        for pack in self._opened or ():
            pack.buf.close()
            pack.index.close()
        for _name, index in self._mismatched or ():
            index.close()
        self._opened, self._mismatched, self._bases = [], [], []
        self._resolved.clear()
        self._entries.clear()

    # ---- locating entries

    def _offset(self, number: int, sha: bytes) -> int:
        """The offset of `sha` (hex) in pack `number`, as its index gives it; KeyError
        when not there; UnreadableObject when the index puts it outside the pack (git's
        ``use_pack``) or its 8-byte offset table."""
        pack = self._packs[number]
        try:
            offset = pack.index.object_offset(sha)
        except KeyError:
            raise
        except Exception as exc:  # noqa: BLE001 - an offset past its index's tables
            raise UnreadableObject(f"object {sha.decode()} is unreadable (offset beyond "
                                   f"end of pack index: {exc})") from None
        if not 12 <= offset < len(pack.buf) - 20:
            raise UnreadableObject(f"object {sha.decode()} is unreadable (offset {offset} "
                                   f"beyond end of packfile ({len(pack.buf)} bytes))")
        return offset

    def locate(self, sha: bytes) -> Loc | None:
        """Where object `sha` (hex) is: the first pack holding it, else loose; None if
        nowhere. Until a pack is needed, a loose copy is taken first (the same object
        by its id), so that a walk of loose objects opens no pack."""
        if sha in self._where:
            return self._where[sha]
        found = self._loose(sha) if self._opened is None else None
        if found is None:
            found = self._in_packs(sha) or self._loose(sha)
        self._where[sha] = found
        return found

    def _loose(self, sha: bytes) -> Loc | None:
        if self.objects_dir is not None and len(sha) == 40 \
                and os.path.isfile(self.loose_path(sha)):
            return -1, sha
        return None

    def _in_packs(self, sha: bytes) -> Loc | None:
        for number in range(len(self._packs)):
            try:
                return number, self._offset(number, sha)
            except KeyError:
                continue
        return None

    def loose_path(self, sha: bytes) -> str:
        assert self.objects_dir is not None
        return os.path.join(self.objects_dir, os.fsdecode(sha[:2]), os.fsdecode(sha[2:]))

    def entry_head(self, loc: Loc) -> tuple[int, int]:
        """(pack type number, declared size) of the entry at `loc`, from its header
        alone: nothing is inflated (a delta's size is its delta data's)."""
        number, where = loc
        assert isinstance(where, int)
        buf = self._packs[number].buf
        assert self._reader is not None
        raw, _, _ = self._reader.take_msb_bytes_at(buf, where)
        size = raw[0] & 0x0F
        for i, byte in enumerate(raw[1:]):
            size += (byte & 0x7F) << (i * 7 + 4)
        return (raw[0] >> 4) & 0x07, size

    def entry(self, loc: Loc) -> UnpackedObject:
        """The pack entry at `loc` as dulwich unpacks it: ``pack_type_num``,
        ``decomp_len``, ``delta_base`` and ``decomp_chunks`` (the object, or the delta),
        inflated no further than its declared size."""
        got = self._entries.get(loc)
        if got is not None:
            return got
        number, where = loc
        assert isinstance(where, int)
        buf = self._packs[number].buf
        reader = self._reader
        assert reader is not None
        got, _end = reader.unpack_object_at(buf, where, reader.hash_func, zlib_bufsize=_SLICE)
        if got.pack_type_num not in (1, 2, 3, 4, OFS_DELTA, REF_DELTA):
            raise PackFormatError(f"bad entry type {got.pack_type_num} at {where}")
        self._entries[loc] = got
        if len(self._entries) > _ENTRIES_KEPT:
            self._entries.popitem(last=False)
        return got

    def base_of(self, loc: Loc, entry: UnpackedObject) -> Loc | None:
        """The location of a delta entry's base, in its own pack (as git and dulwich
        read packs: a REF_DELTA whose base is elsewhere, as in a thin pack nothing
        completed, reads as missing, so it proves and builds nothing here either)."""
        number, where = loc
        assert isinstance(where, int)
        if entry.pack_type_num == OFS_DELTA:
            back = entry.delta_base
            assert isinstance(back, int)
            if not 0 < back <= where - 12:
                raise PackFormatError(f"bad delta base offset at {where}")
            return number, where - back
        base = entry.delta_base
        assert isinstance(base, bytes)
        try:
            return number, self._offset(number, base.hex().encode())
        except KeyError:  # not in this pack
            return None

    # ---- small objects

    def read(self, sha: bytes) -> tuple[int, bytes] | None:
        """(type number, content) of object `sha` (hex); None when it is in no open
        pack and not loose here; UnreadableObject when it is but does not read cleanly."""
        what = f"object {sha.decode()}"
        loc = self.locate(sha)
        if loc is None:
            for name, index in self._indexes_mismatched():
                try:
                    index.object_offset(sha)
                except Exception:  # noqa: BLE001 - KeyError: not in it
                    continue
                raise UnreadableObject(f"{what} is in pack {name}, which does not match its "
                                       "index (cut short or replaced)")
            return None
        try:
            if loc[0] < 0:
                try:
                    got = read_loose(self.loose_path(sha), what)
                except ObjectRefused:
                    loc = self._in_packs(sha)  # git would have read a packed copy first
                    if loc is None:
                        raise
                    self._where[sha] = loc
                    got = self._resolve(loc)
            else:
                got = self._resolve(loc)
        except ObjectRefused as exc:  # it lies: no other reader inflates it again
            raise UnreadableObject(str(exc)) from None
        except _BaseOutside:  # as git and dulwich read a thin pack nothing completed
            raise UnreadableObject(f"object {sha.decode()} is missing (a delta on a base "
                                   "outside its pack)") from None
        except UnreadableObject:
            raise
        except Exception as exc:  # noqa: BLE001 - dulwich raises many types on corrupt data
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
            unpacked = self.entry(cur)
            body = b"".join(unpacked.decomp_chunks)
            if unpacked.pack_type_num not in (OFS_DELTA, REF_DELTA):
                type_num, data = unpacked.pack_type_num, body
                self._keep(cur, type_num, data)
                break
            chain.append((cur, body))
            cur = self.base_of(cur, unpacked)
        apply_delta = self._reader.apply_delta if chain and self._reader else None
        for here, delta in reversed(chain):
            assert apply_delta is not None
            data = b"".join(apply_delta(data, delta))
            if here != loc or len(data) <= _KEEP_RESULT:
                self._keep(here, type_num, data)  # what later chains are built from
        return type_num, data

    def _keep(self, loc: Loc, type_num: int, data: bytes) -> None:
        if loc in self._resolved:
            return
        self._budget = max(self._budget, len(data) + _KEEP_RESULT)
        self._resolved[loc] = (type_num, data)
        self._resolved_bytes += len(data)
        while self._resolved_bytes > self._budget and len(self._resolved) > 1:
            _, (_t, old) = self._resolved.popitem(last=False)
            self._resolved_bytes -= len(old)
