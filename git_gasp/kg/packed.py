"""The packed index format: parts (a base, or a delta over it) and the graph they make.

A part is one file holding, in one order — entities then relations, each newest
`updated_at` first —
  body:  each file's whole text, lowercased, one line per file
  ehead: `\\x1fid\\x1flabel\\x1falias…\\x1f` per entity, lowercased
  rhead: `to\\x1ffrom\\x1ftype` per relation (reverse lookups)
  docs:  `path\\tkind\\tlabel\\ttype\\tvalid\\tvalid_until\\tupdated_at\\tcreated_at\\tsize`
and their line-offset arrays; it is mmapped, so a query touches only what it
reads. Searching is `str.find`/`re` over one lowercased string. Pure: bytes in,
bytes out; where the files live and when they are rebuilt is `index`'s business.
"""

from __future__ import annotations

import mmap
import os
import struct
from array import array
from bisect import bisect_right
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from git_gasp.base.files import open_file
from git_gasp.kg.records import (
    R_ALIASES,
    R_CRE,
    R_ID,
    R_KIND,
    R_LABEL,
    R_PATH,
    R_SIZE,
    R_TEXT,
    R_TO,
    R_TYPE,
    R_UPD,
    R_VALID,
    R_VUNTIL,
    flat,
)

VERSION = 5
MAGIC = b"PKGIDX5\n"
SECTIONS = ("body", "ehead", "rhead", "docs", "body_off", "ehead_off", "rhead_off", "docs_off")


class Part:
    """One packed index (the base, or a delta): blobs for matching, docs for metadata."""

    def __init__(self, meta: dict[str, Any], sections: dict[str, Any]) -> None:
        self.meta = meta
        self.n_entities: int = meta["n_entities"]
        self.n_docs: int = meta["n_docs"]
        self.skip: frozenset[int] = frozenset()  # docs replaced by a newer part
        self._raw = sections
        self._cache: dict[str, Any] = {}

    def text(self, name: str) -> str:
        if name not in self._cache:
            self._cache[name] = str(self._raw[name], "utf-8")
        return self._cache[name]

    def offsets(self, name: str) -> array:
        key = name + "_off"
        if key not in self._cache:
            arr = array("q")
            arr.frombytes(self._raw[key])
            self._cache[key] = arr
        return self._cache[key]

    def line_of(self, name: str, pos: int) -> int:
        return bisect_right(self.offsets(name), pos) - 1

    def doc(self, i: int) -> list[str]:
        off = self.offsets("docs")
        return str(self._raw["docs"][off[i] : off[i + 1] - 1], "utf-8").split("\t")

    def paths(self) -> dict[str, int]:
        """path -> doc number (built on demand: a delta needs it once)."""
        raw = str(self._raw["docs"], "utf-8")
        return {line.split("\t", 1)[0]: i for i, line in enumerate(raw.split("\n")[:-1])}


class Graph:
    """The graph as the parts say it: newest part first, replaced docs skipped."""

    def __init__(self, parts: list[Part], head: str) -> None:
        self.parts = parts
        self.head = head
        counts = {"n_entities": 0, "n_relations": 0, "v": 0, "s": 0, "u": 0, "size": 0}
        for part in parts:
            counts["n_entities"] += part.meta["n_entities"]
            counts["n_relations"] += part.meta["n_relations"]
            for k in ("v", "s", "u", "size"):
                counts[k] += part.meta[{"v": "valid", "s": "superseded", "u": "undeclared"}
                                       .get(k, k)]
            for i in part.skip:  # what a newer part replaced no longer counts
                d = part.doc(i)
                counts["n_entities" if d[1] == "e" else "n_relations"] -= 1
                if d[1] == "r":
                    counts[d[4]] -= 1
                counts["size"] -= int(d[8] or 0)
        self.n_entities = counts["n_entities"]
        self.n_relations = counts["n_relations"]
        self.valid, self.superseded, self.undeclared = counts["v"], counts["s"], counts["u"]
        self.size = counts["size"]

    def scan(self, blob: str, find: Any, kind: str) -> Iterator[tuple[int, int]]:
        """(part, doc) whose line in `blob` has a hit; `find(text, start)` -> pos or -1."""
        for pn, part in enumerate(self.parts):
            if blob == "ehead":
                lo, hi = 0, part.n_entities
                if kind != "e":
                    continue
            else:
                lo, hi = (0, part.n_entities) if kind == "e" else (part.n_entities, part.n_docs)
            if hi <= lo:
                continue
            text = part.text(blob)
            offs = part.offsets(blob)
            pos, end = offs[lo], offs[hi]
            skip = part.skip
            while True:
                p = find(text, pos)
                if p < 0 or p >= end:
                    break
                line = part.line_of(blob, p)
                if line not in skip:
                    yield pn, line
                pos = offs[line + 1]

    def named(self, key: str) -> Iterator[tuple[int, int]]:
        """Entities whose id, label or an alias is exactly `key` (lowercase)."""
        needle = "\x1f" + key + "\x1f"
        yield from self.scan("ehead", lambda t, start: t.find(needle, start), "e")

    def name_map(self) -> dict[str, list[tuple[int, int]]]:
        """Every id/label/alias (normalised) -> entity docs; for lookups in bulk."""
        out: dict[str, list[tuple[int, int]]] = {}
        for pn, part in enumerate(self.parts):
            lines = part.text("ehead").split("\n")
            for i in range(part.n_entities):
                if i in part.skip:
                    continue
                for name in lines[i].strip("\x1f").split("\x1f"):
                    out.setdefault(name, []).append((pn, i))
        return out

    def incoming(self, target: str) -> Iterator[tuple[int, int]]:
        """(part, doc) of relations whose `to` is `target`."""
        needle = "\n" + target + "\x1f"
        for pn, part in enumerate(self.parts):
            rhead = "\n" + part.text("rhead")
            offs = part.offsets("rhead")
            pos = rhead.find(needle)
            while pos >= 0:
                line = part.line_of("rhead", pos)
                doc = part.n_entities + line
                if doc not in part.skip:
                    yield pn, doc
                pos = rhead.find(needle, offs[line + 1])

    def docs(self, kind: str) -> Iterator[tuple[int, list[str]]]:
        for pn, part in enumerate(self.parts):
            rng = range(0, part.n_entities) if kind == "e" else range(part.n_entities,
                                                                      part.n_docs)
            for i in rng:
                if i not in part.skip:
                    yield pn, part.doc(i)

    def doc(self, pn: int, i: int) -> list[str]:
        return self.parts[pn].doc(i)


def _sort_key(r: list[Any]) -> tuple:
    return (r[R_KIND] != "e", _neg(r[R_UPD] or r[R_CRE]), r[R_PATH])


def _neg(s: str) -> str:
    # descending order on ISO-like date strings via a complemented code point map
    return "".join(chr(0x10FFFF - ord(c)) for c in s[:32])


def pack(records: list[list[Any]], meta: dict[str, Any]) -> bytes:
    """The bytes of a part holding `records` (sorted in place into index order)."""
    records.sort(key=_sort_key)
    bodies, docs, eheads, rheads = [], [], [], []
    counts = {"v": 0, "s": 0, "u": 0}
    n_ent = 0
    size = 0
    for r in records:
        bodies.append(r[R_TEXT])
        size += r[R_SIZE]
        if r[R_KIND] == "e":
            n_ent += 1
            names = [r[R_ID], r[R_LABEL], *r[R_ALIASES]]
            eheads.append("\x1f" + "\x1f".join(" ".join(n.split()).lower() for n in names)
                          + "\x1f")
        else:
            counts[r[R_VALID]] += 1
            rheads.append(f"{r[R_TO]}\x1f{r[R_ID]}\x1f{r[R_TYPE]}")
        docs.append(
            "\t".join(
                flat(x) for x in (r[R_PATH], r[R_KIND], r[R_LABEL], r[R_TYPE], r[R_VALID],
                                r[R_VUNTIL], r[R_UPD], r[R_CRE], r[R_SIZE])
            )
        )

    def blob(lines: list[str]) -> tuple[bytes, bytes]:
        offs = array("q", [0])
        total = 0
        for ln in lines:
            total += len(ln) + 1
            offs.append(total)
        return ("\n".join(lines) + "\n" if lines else "").encode("utf-8"), offs.tobytes()

    def bblob(lines: list[str]) -> tuple[bytes, bytes]:
        enc = [ln.encode("utf-8") for ln in lines]
        offs = array("q", [0])
        total = 0
        for b in enc:
            total += len(b) + 1
            offs.append(total)
        return (b"\n".join(enc) + b"\n" if enc else b""), offs.tobytes()

    sec: dict[str, bytes] = {}
    sec["body"], sec["body_off"] = blob(bodies)
    sec["ehead"], sec["ehead_off"] = blob(eheads)
    sec["rhead"], sec["rhead_off"] = blob(rheads)
    sec["docs"], sec["docs_off"] = bblob(docs)
    meta = dict(meta, n_entities=n_ent, n_docs=len(records), n_relations=len(records) - n_ent,
                valid=counts["v"], superseded=counts["s"], undeclared=counts["u"], size=size)
    table = []
    pos = 0
    for name in SECTIONS:
        table.append([name, pos, len(sec[name])])
        pos += len(sec[name])
    header = orjson.dumps({"meta": meta, "sections": table})
    return MAGIC + struct.pack("<Q", len(header)) + header + b"".join(sec[n] for n in SECTIONS)


def unpack(data: Any) -> Part | None:
    """An Index over `data` (bytes or an mmap); sections are zero-copy views."""
    if bytes(data[: len(MAGIC)]) != MAGIC:
        return None
    (hlen,) = struct.unpack_from("<Q", data, len(MAGIC))
    start = len(MAGIC) + 8
    header = orjson.loads(bytes(data[start : start + hlen]))
    base = start + hlen
    mv = memoryview(data)
    sections = {name: mv[base + off : base + off + ln] for name, off, ln in
                header["sections"]}
    return Part(header["meta"], sections)


def load_file(path: Path) -> Part | None:
    """The part stored at `path`, mmapped; None when missing or unreadable."""
    try:
        with open_file(path) as fh:
            size = os.fstat(fh.fileno()).st_size
            if size < len(MAGIC) + 8:
                return None
            data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        return unpack(data)
    except (OSError, ValueError, KeyError, TypeError, struct.error):
        return None


def doc_numbers(base: Part, paths: set[str]) -> list[int]:
    """Doc numbers of `paths` in `base`: a few by direct search, many through a map."""
    if len(paths) > 32:
        where = base.paths()
        return sorted(where[p] for p in paths if p in where)
    docs = bytes(base._raw["docs"])
    out = []
    for p in paths:
        needle = p.encode("utf-8") + b"\t"
        pos = 0 if docs.startswith(needle) else docs.find(b"\n" + needle) + 1
        if pos > 0 or docs.startswith(needle):
            out.append(base.line_of("docs", pos))
    return sorted(out)


def repack(part: Part) -> bytes:
    """The bytes of an in-memory part (to persist a delta)."""
    header = orjson.dumps({"meta": part.meta, "sections": _table(part)})
    return (MAGIC + struct.pack("<Q", len(header)) + header
            + b"".join(bytes(part._raw[n]) for n in SECTIONS))


def _table(part: Part) -> list[list[Any]]:
    table, pos = [], 0
    for name in SECTIONS:
        ln = len(part._raw[name])
        table.append([name, pos, ln])
        pos += ln
    return table
