"""One indexed file as a record: the fields search, info and view read.

A record is a list (cheap to build 400,000 times) indexed by the R_* constants;
`parse_file` makes one from a file's bytes, with no git and no writes.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from git_gasp.base.files import read_file
from git_gasp.kg.frontmatter import lenient_fields, split
from git_gasp.kg.ids import is_safe_component
from git_gasp.kg.model import inside

# record: [path, kind, id_or_from, label, type, aliases, valid, valid_until,
#          updated_at, created_at, size, text_lc, to]
R_PATH, R_KIND, R_ID, R_LABEL, R_TYPE, R_ALIASES = 0, 1, 2, 3, 4, 5
R_VALID, R_VUNTIL, R_UPD, R_CRE, R_SIZE, R_TEXT, R_TO = 6, 7, 8, 9, 10, 11, 12


_BAD = re.compile("[\t\n\r\x1f]")
_PLAIN_ID = re.compile(r"[a-z0-9][a-z0-9-]*(?:\.md)?")


def flat(v: Any) -> str:
    """`v` as one index field: a string without tabs, newlines or \\x1f."""
    if v is None:
        return ""
    v = str(v)
    return _BAD.sub(" ", v) if _BAD.search(v) else v


def _safe(part: str) -> bool:
    return bool(_PLAIN_ID.fullmatch(part)) or is_safe_component(part)


_REPORTED: set[str] = set()


def utf8_name(rel: str) -> bool:
    """True when the path `rel` is UTF-8; else it is reported (once, on stderr) and the
    caller skips it: a graph file is named by its id, and no id is a non-UTF-8 name."""
    try:
        rel.encode("utf-8")
        return True
    except UnicodeEncodeError:
        if rel not in _REPORTED:
            _REPORTED.add(rel)
            shown = rel.encode("utf-8", "surrogateescape").decode("ascii", "backslashreplace")
            print(f"git gasp: warning: kg: skipped {shown}: its name is not UTF-8",
                  file=sys.stderr)
        return False


def parse_file(rel: str, raw: bytes) -> list[Any] | None:
    """One record from a file's bytes; None when `rel` is not an entity/relation path."""
    if not utf8_name(rel):
        return None
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
    fields = lenient_fields(fm_text)
    if "valid_until" not in fields:
        valid = "u"
    elif fields.get("valid_until") in (None, "", "null"):
        valid = "v"
    else:
        valid = "s"
    if kind == "e":
        label = flat(fields.get("label")) or ident
        etype = flat(fields.get("type"))
        al = fields.get("aliases")
        aliases = [flat(a) for a in al] if isinstance(al, list) else ([flat(al)] if al else [])
    else:
        label, etype, aliases = "", ftype, []
    lc = text.lower().replace("\r", " ").replace("\n", " ")
    return [
        rel, kind, ident, label, etype, aliases, valid, flat(fields.get("valid_until")),
        flat(fields.get("updated_at")), flat(fields.get("created_at")), len(raw), lc, to,
    ]


def read_record(root: Path, rel: str) -> list[Any] | None:
    """The record of the worktree file `rel`; None when missing or not a graph file."""
    path = inside(root, rel)
    if path is None:
        return None
    try:
        raw = read_file(path)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    return parse_file(rel, raw)
