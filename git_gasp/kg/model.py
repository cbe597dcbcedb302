"""Entity and relation files: paths, templates, and reading them back.

    entities/<id>/entity.md            id, label, type, aliases, created_at,
                                       updated_at, sources (+ any other field)
    entities/<from>/<type>/<to>.md     from, to, type, created_at, updated_at,
                                       valid_until, sources (+ any other field)

Bodies are Markdown: an entity gets `## Overview` (and `## Sources` listing its
sources) when created; a relation gets `## Insight`. Merges append a dated `###`
subsection (before a trailing `## Sources` section, whose list grows too).
"""

from __future__ import annotations

import os
from pathlib import Path

from git_gasp.base import files
from git_gasp.base.errors import GaspError
from git_gasp.kg.frontmatter import FrontMatter, render_document

ENTITY_FILE = "entity.md"


def entity_rel(eid: str) -> str:
    return f"entities/{eid}/{ENTITY_FILE}"


def relation_rel(src: str, rtype: str, dst: str) -> str:
    return f"entities/{src}/{rtype}/{dst}.md"


def _section(body: str, heading: str) -> str:
    body = body.strip("\n")
    if body.lstrip().startswith("#"):
        return body + "\n"
    return f"{heading}\n\n{body}\n" if body else f"{heading}\n"


def new_entity(
    eid: str, label: str, etype: str, aliases: list[str], sources: list[str],
    today: str, body: str, extra: dict,
) -> str:
    fm = FrontMatter()
    fm.set("id", eid)
    fm.set("label", label)
    fm.set("type", etype)
    fm.set("aliases", aliases)
    fm.set("created_at", today)
    fm.set("updated_at", today)
    fm.set("sources", sources, quote=True)
    for k, v in extra.items():
        fm.set(k, v)
    text = "\n" + _section(body, "## Overview")
    if sources and "## Sources" not in text:
        text += "\n## Sources\n\n" + "".join(f"- {s}\n" for s in sources)
    return render_document(fm, text)


def new_relation(
    src: str, dst: str, rtype: str, sources: list[str], today: str, body: str, extra: dict,
) -> str:
    fm = FrontMatter()
    fm.set("from", src)
    fm.set("to", dst)
    fm.set("type", rtype)
    fm.set("created_at", today)
    fm.set("updated_at", today)
    fm.set("valid_until", None)
    fm.set("sources", sources, quote=True)
    for k, v in extra.items():
        fm.set(k, v)
    return render_document(fm, "\n" + _section(body, "## Insight"))


def as_list(value: object) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value if v is not None]
    return [str(value)]


def union(old: list[str], new: list[str], *, fold_case: bool = False) -> list[str]:
    """`old` followed by the items of `new` it lacks (order kept)."""
    seen = {(o.casefold() if fold_case else o) for o in old}
    out = list(old)
    for n in new:
        key = n.casefold() if fold_case else n
        if key not in seen:
            seen.add(key)
            out.append(n)
    return out


def append_subsection(body: str, today: str, text: str, new_sources: list[str]) -> str:
    """Append `### <today>` + text; keep a final `## Sources` section last and extend it."""
    text = text.strip("\n")
    lines = body.rstrip("\n").split("\n") if body.strip() else []
    src_at = None
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].startswith("## "):
            if lines[i].strip().lower() == "## sources":
                src_at = i
            break
    block = [f"### {today}", ""] + (text.split("\n") if text else []) if text else []
    if src_at is None:
        out = lines + ([""] + block if block else [])
        if new_sources:
            out += ["", "## Sources", ""] + [f"- {s}" for s in new_sources]
    else:
        head, tail = lines[:src_at], lines[src_at:]
        while head and not head[-1].strip():
            head.pop()
        while tail and not tail[-1].strip():
            tail.pop()
        tail += [f"- {s}" for s in new_sources]
        out = head + ([""] + block if block else []) + [""] + tail
    result = "\n".join(out) + "\n"
    return result if result.startswith("\n") else "\n" + result


def inside(root: Path, rel: str) -> Path | None:
    """root/rel if no component of it is a symlink (so it cannot lead outside the
    worktree: a graph repo must not make us read or write ~/.ssh); else None."""
    path = root
    for part in rel.split("/"):
        if part in ("", ".", ".."):
            return None
        path = path / part
        if os.path.islink(path):
            return None
    return path


def read_text(root: Path, rel: str) -> str | None:
    """A graph file's text; None when missing, a directory, or reached through a symlink."""
    path = inside(root, rel)
    if path is None:
        return None
    try:
        return files.read_text(path, errors="replace", limit=files.MAX_FILE)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None


def writable(root: Path, rel: str) -> Path:
    path = inside(root, rel)
    if path is None:
        raise GaspError(f"refusing to write {rel}: a path component is a symlink")
    return path
