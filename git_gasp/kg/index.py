"""A search index cache, so search/info/view do not re-read every file.

The index holds the graph as committed at HEAD. It is a disposable cache in the
worktree's git dir (`<gitdir>/perstate-index/`), keyed by the HEAD commit, which
is read from the ref files without running git: checking freshness costs
microseconds, not a scan of 400,000 files. When HEAD moved, only the blobs that
`git diff-tree` names are read (one `git cat-file --batch`); a missing or
unreadable cache is rebuilt from the tree the same way. Uncommitted hand edits
are not part of the graph until committed (`kg save` commits everything it
writes); `uncommitted=True` (`--uncommitted` on the CLI) overlays them, at the
cost of one `git status`.

`index.bin` is one file (replaced atomically) holding, in one order — entities
then relations, each newest `updated_at` first —
  body:  each file's whole text, lowercased, one line per file
  ehead: `\\x1fid\\x1flabel\\x1falias…\\x1f` per entity, lowercased
  rhead: `to\\x1ffrom\\x1ftype` per relation (reverse lookups)
  docs:  `path\\tkind\\tlabel\\ttype\\tvalid\\tvalid_until\\tupdated_at\\tcreated_at\\tsize`
and their line-offset arrays; it is mmapped, so a query touches only what it
reads. Searching is `str.find`/`re` over one lowercased string.

After a save, rewriting 190 MB for three changed files would cost seconds, so
a change set up to DELTA_MAX files goes to `delta.bin` instead: the changed
records packed the same way plus the base documents they replace. A `Graph`
is the base and the delta read together; a bigger change rebuilds the base.
"""

from __future__ import annotations

import contextlib
import gc
import os
import re
import struct
from array import array
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from git_gasp.base import git
from git_gasp.kg.frontmatter import fast_fields, load_yaml, split
from git_gasp.kg.ids import is_safe_component

VERSION = 5
MAGIC = b"PKGIDX5\n"
SECTIONS = ("body", "ehead", "rhead", "docs", "body_off", "ehead_off", "rhead_off", "docs_off")

# record: [path, kind, id_or_from, label, type, aliases, valid, valid_until,
#          updated_at, created_at, size, text_lc, to]
R_PATH, R_KIND, R_ID, R_LABEL, R_TYPE, R_ALIASES = 0, 1, 2, 3, 4, 5
R_VALID, R_VUNTIL, R_UPD, R_CRE, R_SIZE, R_TEXT, R_TO = 6, 7, 8, 9, 10, 11, 12


_BAD = re.compile("[\t\n\r\x1f]")
_PLAIN_ID = re.compile(r"[a-z0-9][a-z0-9-]*(?:\.md)?")
DELTA_MAX = 20_000


def _s(v: Any) -> str:
    if v is None:
        return ""
    v = str(v)
    return _BAD.sub(" ", v) if _BAD.search(v) else v


def _safe(part: str) -> bool:
    return bool(_PLAIN_ID.fullmatch(part)) or is_safe_component(part)


def parse_file(rel: str, raw: bytes) -> list[Any] | None:
    """One record from a file's bytes; None when `rel` is not an entity/relation path."""
    parts = rel.split("/")
    if len(parts) == 3 and parts[2] == "entity.md":
        kind, ident, to, ftype = "e", parts[1], "", ""
    elif len(parts) == 4 and parts[3].endswith(".md") and parts[3] != "entity.md":
        kind, ident, to, ftype = "r", parts[1], parts[3][:-3], parts[2]
    else:
        return None
    if not all(_safe(p) for p in parts[1:]):
        return None
    text = raw.decode("utf-8", "replace")
    fm_text, _ = split(text)
    fields: Any = {}
    if fm_text:
        fields = fast_fields(fm_text)
        if fields is None:
            try:
                fields = load_yaml(fm_text)
            except Exception:  # noqa: BLE001 - a broken file is indexed by its text only
                fields = {}
            if not isinstance(fields, dict):
                fields = {}
    if "valid_until" not in fields:
        valid = "u"
    elif fields.get("valid_until") in (None, "", "null"):
        valid = "v"
    else:
        valid = "s"
    if kind == "e":
        label = _s(fields.get("label")) or ident
        etype = _s(fields.get("type"))
        al = fields.get("aliases")
        aliases = [_s(a) for a in al] if isinstance(al, list) else ([_s(al)] if al else [])
    else:
        label, etype, aliases = "", ftype, []
    lc = text.lower().replace("\r", " ").replace("\n", " ")
    return [
        rel, kind, ident, label, etype, aliases, valid, _s(fields.get("valid_until")),
        _s(fields.get("updated_at")), _s(fields.get("created_at")), len(raw), lc, to,
    ]


def read_record(root: Path, rel: str) -> list[Any] | None:
    from git_gasp.kg.model import inside

    path = inside(root, rel)
    if path is None:
        return None
    try:
        raw = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    return parse_file(rel, raw)


@dataclass
class State:
    head: str
    dirty: list[list[Any]]  # [path, mtime_ns, size] of changed files under entities/


def _hexsha(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def head_commit(root: Path) -> str:
    """HEAD's commit id ("" when unborn), read from the ref files; git as a fallback."""
    from git_gasp.kg.workspace import git_dir_of

    try:
        gd = git_dir_of(root)
        head = (gd / "HEAD").read_text(encoding="utf-8").strip()
        if _hexsha(head):
            return head
        if head.startswith("ref: refs/"):
            ref = head[5:]
            common = gd
            if (gd / "commondir").is_file():
                common = (gd / (gd / "commondir").read_text(encoding="utf-8").strip()).resolve()
            for base in (gd, common):
                p = base / ref
                if p.is_file():
                    val = p.read_text(encoding="utf-8").strip()
                    if _hexsha(val):
                        return val
                    raise ValueError(val)
            packed = common / "packed-refs"
            if packed.is_file():
                for line in packed.read_text(encoding="utf-8").splitlines():
                    parts = line.split(" ", 1)
                    if len(parts) == 2 and parts[1] == ref and _hexsha(parts[0]):
                        return parts[0]
            return ""
    except (OSError, ValueError, Exception):  # noqa: BLE001 - anything odd: ask git
        pass
    return git.out(root, "rev-parse", "-q", "--verify", "HEAD", check=False)


def worktree_state(root: Path) -> State:
    """HEAD and the uncommitted changes under entities/, from one `git status`."""
    proc = git.run(
        root, "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=normal",
        "--no-renames", "--ignore-submodules", "--", "entities",
    )
    head = ""
    paths: list[str] = []
    for entry in proc.stdout.decode("utf-8", "surrogateescape").split("\0"):
        if entry.startswith("# branch.oid "):
            head = entry.split()[-1]
            if head == "(initial)":
                head = ""
        elif entry[:2] in ("1 ", "u "):
            paths.append(entry.split(" ", 8 if entry[0] == "1" else 10)[-1])
        elif entry.startswith("? "):
            rel = entry[2:]
            if rel.endswith("/"):  # an untracked directory: list what is in it
                for dirpath, _dirs, files in os.walk(root / rel):
                    for f in files:
                        full = os.path.join(dirpath, f)
                        paths.append(os.path.relpath(full, root).replace(os.sep, "/"))
            else:
                paths.append(rel)
    dirty: list[list[Any]] = []
    for path in paths:
        try:
            st = os.stat(root / path)
            dirty.append([path, st.st_mtime_ns, st.st_size])
        except OSError:
            dirty.append([path, 0, -1])
    dirty.sort()
    return State(head, dirty)


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


def git_dir(root: Path) -> Path:
    from git_gasp.kg.workspace import git_dir_of

    return git_dir_of(root)


def _index_dir(root: Path) -> Path:
    return git_dir(root) / "perstate-index"


def _write_atomic(path: Path, data: bytes) -> None:
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _sort_key(r: list[Any]) -> tuple:
    return (r[R_KIND] != "e", _neg(r[R_UPD] or r[R_CRE]), r[R_PATH])


def _neg(s: str) -> str:
    # descending order on ISO-like date strings via a complemented code point map
    return "".join(chr(0x10FFFF - ord(c)) for c in s[:32])


def _pack(records: list[list[Any]], meta: dict[str, Any]) -> bytes:
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
                _s(x) for x in (r[R_PATH], r[R_KIND], r[R_LABEL], r[R_TYPE], r[R_VALID],
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
    import orjson

    table = []
    pos = 0
    for name in SECTIONS:
        table.append([name, pos, len(sec[name])])
        pos += len(sec[name])
    header = orjson.dumps({"meta": meta, "sections": table})
    return MAGIC + struct.pack("<Q", len(header)) + header + b"".join(sec[n] for n in SECTIONS)


def _unpack(data: Any) -> Part | None:
    """An Index over `data` (bytes or an mmap); sections are zero-copy views."""
    import orjson

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


def _load_file(path: Path) -> Part | None:
    import mmap

    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size < len(MAGIC) + 8:
                return None
            data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        return _unpack(data)
    except (OSError, ValueError, KeyError, TypeError, struct.error):
        return None


def _cat_blobs(root: Path, shas: list[str]) -> list[bytes]:
    """The contents of `shas`, in order, from one `git cat-file --batch`."""
    if not shas:
        return []
    proc = git.run(root, "cat-file", "--batch", input=("\n".join(shas) + "\n").encode())
    data = proc.stdout
    out: list[bytes] = []
    pos = 0
    for _ in shas:
        nl = data.index(b"\n", pos)
        header = data[pos:nl].split()
        if len(header) != 3 or header[1] != b"blob":
            out.append(b"")
            pos = nl + 1
            continue
        size = int(header[2])
        out.append(data[nl + 1 : nl + 1 + size])
        pos = nl + 1 + size + 1
    return out


def _tree_blobs(root: Path, head: str) -> list[tuple[str, str]]:
    """(sha, path) of every blob under entities/ at `head`."""
    proc = git.run(root, "ls-tree", "-r", "-z", "--full-tree", head, "--", "entities")
    out = []
    for entry in proc.stdout.decode("utf-8", "surrogateescape").split("\0"):
        if not entry:
            continue
        meta, _, path = entry.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == "blob" and parts[0] in ("100644", "100755"):
            out.append((parts[2], path))  # symlinks (120000) are not graph files
    return out


def _tree_changes(root: Path, old: str, new: str) -> list[tuple[str, str]] | None:
    """(new sha or "" for deleted, path) between two commits; None if git cannot tell."""
    proc = git.run(root, "diff-tree", "-r", "-z", "--no-renames", old, new, "--", "entities",
                      check=False)
    if proc.returncode != 0:
        return None
    items = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
    out = []
    for meta, path in zip(items[0::2], items[1::2], strict=False):
        parts = meta.split()
        if len(parts) < 5:
            continue
        new_sha = "" if parts[4].startswith("D") or set(parts[3]) == {"0"} else parts[3]
        if parts[1] == "160000" or (new_sha and parts[1] not in ("100644", "100755")):
            new_sha = ""
        out.append((new_sha, path))
    return out


def _read_blobs(root: Path, todo: list[tuple[str, str]]) -> list[list[Any]]:
    """Records for (sha, path) pairs; deleted ("" sha) and non-graph paths are skipped."""
    shas = [sha for sha, _ in todo if sha]
    contents = iter(_cat_blobs(root, shas))
    out = []
    for sha, rel in todo:
        if sha:
            rec = parse_file(rel, next(contents))
            if rec is not None:
                out.append(rec)
    return out


def _build(root: Path, head: str) -> Part:
    """A fresh base for `head`, written to index.bin (and any delta dropped)."""
    idir = _index_dir(root)
    gc_was = gc.isenabled()
    gc.disable()  # 400k small containers: the cyclic GC would only rescan them
    try:
        records = _read_blobs(root, _tree_blobs(root, head)) if head else []
        data = _pack(records, {"version": VERSION, "head": head, "token": os.urandom(8).hex()})
        del records
    finally:
        if gc_was:
            gc.enable()
    try:
        _write_atomic(idir / "index.bin", data)
        with contextlib.suppress(FileNotFoundError):
            (idir / "delta.bin").unlink()
    except OSError:
        pass  # a read-only git dir: still answer from memory
    part = _unpack(data)
    assert part is not None
    return part


def _doc_numbers(base: Part, paths: set[str]) -> list[int]:
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


def _delta(base: Part, records: list[list[Any]], changed: set[str], meta: dict) -> Part:
    part = _unpack(_pack(records, dict(meta, skip=_doc_numbers(base, changed))))
    assert part is not None
    return part


def _attach(base: Part, delta: Part) -> Graph:
    base.skip = frozenset(delta.meta.get("skip", ()))
    return Graph([delta, base], delta.meta["head"])


def load(root: Path, *, uncommitted: bool = False) -> Graph:
    """The graph committed at HEAD; with `uncommitted`, plus the worktree's edits."""
    head = head_commit(root)
    idir = _index_dir(root)
    base = _load_file(idir / "index.bin")
    if base is None or base.meta.get("version") != VERSION:
        base = _build(root, head)
    graph: Graph | None = None
    changed: set[str] = set()
    if base.meta["head"] == head:
        graph = Graph([base], head)
    else:
        delta = _load_file(idir / "delta.bin")
        if (delta is not None and delta.meta.get("base") == base.meta["token"]
                and delta.meta.get("head") == head):
            graph = _attach(base, delta)
            changed = set(delta.meta.get("changed", ()))
        else:
            changes = _tree_changes(root, base.meta["head"], head) if head else None
            if changes is None or len(changes) > DELTA_MAX:
                base = _build(root, head)
                graph = Graph([base], head)
            else:
                changed = {path for _, path in changes}
                meta = {"version": VERSION, "base": base.meta["token"], "head": head,
                        "token": os.urandom(8).hex(), "changed": sorted(changed)}
                delta = _delta(base, _read_blobs(root, changes), changed, meta)
                with contextlib.suppress(OSError):
                    _write_atomic(idir / "delta.bin", _repack(delta))
                graph = _attach(base, delta)
    if not uncommitted:
        return graph
    st = worktree_state(root)
    if not st.dirty:
        return graph
    # worktree edits: the committed changes plus the dirty files, read from disk
    dirty = {d[0] for d in st.dirty}
    committed = []
    if len(graph.parts) == 2:
        committed = _read_blobs(root, _tree_changes(root, base.meta["head"], head) or [])
    recs = {r[R_PATH]: r for r in committed if r[R_PATH] not in dirty}
    for rel in dirty:
        rec = read_record(root, rel)
        if rec is not None:
            recs[rel] = rec
    overlay = _delta(base, list(recs.values()), changed | dirty,
                     {"version": VERSION, "head": head, "dirty": len(dirty)})
    return _attach(base, overlay)


def _repack(part: Part) -> bytes:
    """The bytes of an in-memory part (to persist a delta)."""
    import orjson

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
