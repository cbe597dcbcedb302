"""`kg search`: ranked keyword/regex search, multi-hop traversal, reverse lookup.

Ranking: an exact id/label/alias match first, then other id/label/alias hits,
then entities whose text matches, then relations whose text matches; inside
each group the most recently updated first (the index is stored in that order,
so the first `limit` hits found are the top ones and the scan stops there).
Matching is case-insensitive. A query with regex metacharacters is a Python
regex (close to `grep -E`); one that does not compile, or any query with
`literal=True`, is matched as plain text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from git_gasp.base.errors import UsageError
from git_gasp.kg import index
from git_gasp.kg.frontmatter import lenient_fields, split
from git_gasp.kg.model import inside, read_text

_META = set(".^$*+?{}[]\\|()")


@dataclass
class Filters:
    valid_only: bool = False
    since: str | None = None
    etype: str | None = None
    rel: str | None = None

    def accept(self, d: list[str]) -> bool:
        _path, kind, _label, dtype, valid, _vu, upd, cre = d[:8]
        if self.valid_only and valid == "s":
            return False
        if self.since and (upd or cre or "") < self.since:
            return False
        if kind == "e":
            return self.etype is None or dtype == self.etype
        if self.rel is not None:
            return dtype == self.rel
        return self.etype is None  # --type alone asks for entities only


@dataclass
class Matcher:
    query: str
    literal: bool
    pattern: re.Pattern | None = None
    needle: str = ""

    @classmethod
    def make(cls, query: str, literal: bool = False) -> Matcher:
        if not query:
            raise UsageError("empty query")
        if not literal and any(c in _META for c in query):
            try:
                return cls(query, False, re.compile(query, re.IGNORECASE))
            except re.error:
                pass
        return cls(query, True, None, query.lower())

    def find(self, text: str, start: int) -> int:
        if self.pattern is None:
            return text.find(self.needle, start)
        m = self.pattern.search(text, start)
        return m.start() if m else -1

    def line_hit(self, line: str) -> re.Match | tuple[int, int] | None:
        if self.pattern is None:
            i = line.lower().find(self.needle)
            return (i, i + len(self.needle)) if i >= 0 else None
        return self.pattern.search(line)


@dataclass
class Hit:
    rank: int
    doc: int
    fields: list[str]

    def as_dict(self, root: Path, m: Matcher) -> dict[str, Any]:
        path, kind, label, dtype, valid, vuntil, upd, cre = self.fields[:8]
        parts = path.split("/")
        d: dict[str, Any] = {"kind": "entity" if kind == "e" else "relation", "path": path}
        if kind == "e":
            d.update(id=parts[1], label=label, type=dtype)
        else:
            d.update({"from": parts[1], "type": parts[2], "to": parts[3][:-3]})
        d.update(rank=self.rank, valid=valid != "s", valid_until=vuntil or None,
                 updated_at=upd or None, created_at=cre or None,
                 snippet=snippet(root, path, m))
        return d


def snippet(root: Path, rel: str, m: Matcher, width: int = 110) -> str:
    text = read_text(root, rel)
    if text is None:
        return ""
    fm, body = split(text)
    best = None
    for chunk in (body, fm or ""):
        for line in chunk.splitlines():
            hit = m.line_hit(line)
            if hit is not None:
                best = (line, hit)
                break
        if best:
            break
    if not best:
        return ""
    line, hit = best
    start, end = (hit.start(), hit.end()) if isinstance(hit, re.Match) else hit
    line = line.strip() if len(line) <= width else line
    if len(line) > width:
        lo = max(0, start - width // 3)
        line = ("…" if lo else "") + line[lo : lo + width].strip() + "…"
    return line


def ranked(g: index.Graph, m: Matcher, flt: Filters) -> Iterator[Hit]:
    """Hits best first: exact names, name hits, entity text, relation text."""
    seen: set[tuple[int, int]] = set()
    sources: list[tuple[int, Iterator[tuple[int, int]]]] = []
    if m.literal:
        sources.append((0, g.named(m.needle)))
    sources += [(1, g.scan("ehead", m.find, "e")), (2, g.scan("body", m.find, "e")),
                (3, g.scan("body", m.find, "r"))]
    for rank, it in sources:
        for key in it:
            if key in seen:
                continue
            seen.add(key)
            d = g.doc(*key)
            if flt.accept(d):
                yield Hit(rank, key[1], d)


@dataclass
class Outcome:
    hits: list[dict[str, Any]] = field(default_factory=list)
    more: bool = False
    hops: list[dict[str, Any]] = field(default_factory=list)
    reverse: list[dict[str, Any]] = field(default_factory=list)


def _relation_valid(root: Path, rel: str) -> bool:
    text = read_text(root, rel)
    if text is None:
        return False
    fm, _ = split(text)
    return lenient_fields(fm).get("valid_until") in (None, "", "null")


def outgoing(root: Path, eid: str, rel: str | None, valid_only: bool) -> list[tuple[str, str]]:
    base = inside(root, f"entities/{eid}")
    out: list[tuple[str, str]] = []
    if base is None:
        return out
    try:
        types = sorted(d for d in base.iterdir() if d.is_dir() and not d.name.startswith("."))
    except OSError:
        return out
    for d in types:
        if rel is not None and d.name != rel:
            continue
        if d.is_symlink():
            continue
        for f in sorted(d.iterdir()):
            if f.name.endswith(".md") and not f.name.startswith(".") and not f.is_symlink():
                if valid_only and not _relation_valid(root, f"entities/{eid}/{d.name}/{f.name}"):
                    continue
                out.append((d.name, f.name[:-3]))
    return out


def hops(root: Path, starts: list[str], n: int, rel: str | None, valid_only: bool,
         cap: int = 2000) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    visited = set(starts)
    frontier = list(dict.fromkeys(starts))
    total = 0
    for hop in range(1, n + 1):
        edges = []
        nxt: list[str] = []
        for src in frontier:
            for rtype, dst in outgoing(root, src, rel, valid_only):
                edges.append({"from": src, "type": rtype, "to": dst})
                total += 1
                if dst not in visited:
                    visited.add(dst)
                    nxt.append(dst)
                if total >= cap:
                    break
        out.append({"hop": hop, "edges": edges})
        frontier = nxt
        if not frontier or total >= cap:
            break
    return out


def reverse(g: index.Graph, target: str, flt: Filters, limit: int) -> list[dict[str, Any]]:
    """Relations pointing at `target` (valid-only, since and --rel apply)."""
    out: list[dict[str, Any]] = []
    for key in g.incoming(target):
        d = g.doc(*key)
        ok = not (flt.valid_only and d[4] == "s")
        ok = ok and not (flt.since and (d[6] or d[7] or "") < flt.since)
        ok = ok and (flt.rel is None or d[3] == flt.rel)
        if ok:
            src, rtype = d[0].split("/")[1:3]
            out.append({"from": src, "type": rtype, "to": target, "path": d[0],
                        "valid": d[4] != "s", "valid_until": d[5] or None})
            if len(out) >= limit:
                break
    return out


def run(root: Path, query: str | None, *, limit: int = 20, hop: int = 0,
        reverse_id: str | None = None, flt: Filters | None = None,
        literal: bool = False, idx: index.Graph | None = None) -> Outcome:
    flt = flt or Filters()
    if limit < 1:
        raise UsageError("--limit must be at least 1")
    if hop < 0:
        raise UsageError("--hop must be 0 or more")
    idx = idx or index.load(root)
    res = Outcome()
    if reverse_id:
        res.reverse = reverse(idx, reverse_id, flt, limit)
    if query:
        m = Matcher.make(query, literal)
        for hit in ranked(idx, m, flt):
            if len(res.hits) >= limit:
                res.more = True
                break
            res.hits.append(hit.as_dict(root, m))
    elif not reverse_id:
        raise UsageError("give a QUERY or --reverse ID")
    if hop:
        starts = [h["id"] for h in res.hits if h["kind"] == "entity"]
        if reverse_id and not query:
            starts = [reverse_id]
        res.hops = hops(root, starts, hop, flt.rel, flt.valid_only)
    return res
