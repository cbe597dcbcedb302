"""Edit a JSON settings file in place: rewrite only the values that changed.

`apply_hooks(text, hooks)` returns `text` with the top-level ``hooks`` member made
equal to `hooks` (None: removed); `apply_member` does so for any top-level member. The
old and new values are compared down the tree and only what differs is spliced: a
member or list element added, removed or replaced. Every other byte (key order,
indentation, spacing, line ends, the other settings, the user's own entries) is kept,
so an install followed by an uninstall gives back the file it started from. New text
follows the file's own indentation and line ends. The result is checked by parsing it;
a file the splice cannot handle (duplicate keys, say) is written whole instead: same
data, same key order, its indentation kept. An empty object is written as Claude Code
writes its settings (two-space indent).
"""

from __future__ import annotations

import json
import re
from json.decoder import scanstring
from typing import Any

_WS = re.compile(r"[ \t\n\r]*")
_INDENT = re.compile(r"\n([ \t]+)\S")

Op = tuple[int, int, str]  # replace text[a:b] with the string


class _Style:
    """How the file is written: indentation unit, line end, separators, escaping."""

    def __init__(self, text: str) -> None:
        m = _INDENT.search(text)
        self.compact = bool(text.strip()) and "\n" not in text.strip()
        self.unit = m.group(1) if m else "  "
        self.eol = "\r\n" if "\r\n" in text else "\n"
        self.ascii = bool(re.search(r"\\u[0-9a-fA-F]{4}", text)) and text.isascii()
        self.key_sep = ": " if (": " in text or not self.compact) else ":"
        if ", " in text or "," not in text:  # no comma yet: as spaced as the colons
            self.item_sep = ", " if self.key_sep == ": " else ","
        else:
            self.item_sep = ","

    def dump(self, value: Any, level: int) -> str:
        if self.compact:
            return json.dumps(value, ensure_ascii=self.ascii,
                              separators=(self.item_sep, self.key_sep))
        out = json.dumps(value, indent=self.unit, ensure_ascii=self.ascii)
        return out.replace("\n", self.eol + self.unit * level)

    def item(self, key: str | None, value: Any, level: int) -> str:
        head = "" if key is None else json.dumps(key, ensure_ascii=self.ascii) + self.key_sep
        return head + self.dump(value, level)

    def sep(self, level: int) -> str:
        return self.item_sep if self.compact else "," + self.eol + self.unit * level


# (key or None, item start, value start, value end)
Item = tuple[str | None, int, int, int]


def _items(text: str, start: int) -> tuple[list[Item], int]:
    """The members of the object (or elements of the array) opening at `start`, and the
    index of its closing bracket."""
    decoder = json.JSONDecoder()
    close = "}" if text[start] == "{" else "]"
    i = _WS.match(text, start + 1).end()
    out: list[Item] = []
    if text[i] == close:
        return out, i
    while True:
        key = None
        first = i
        if close == "}":
            if text[i] != '"':
                raise ValueError("a key was expected")
            key, i = scanstring(text, i + 1)
            i = _WS.match(text, i).end()
            if text[i] != ":":
                raise ValueError("':' was expected")
            i = _WS.match(text, i + 1).end()
        _, end = decoder.raw_decode(text, i)
        out.append((key, first, i, end))
        i = _WS.match(text, end).end()
        if text[i] == ",":
            i = _WS.match(text, i + 1).end()
            continue
        if text[i] != close:
            raise ValueError(f"{close!r} was expected")
        return out, i


def _edit_seq(text: str, start: int, items: list[Item], close: int, keep: list[bool],
              added: list[tuple[str | None, Any]], level: int, style: _Style,
              ops: list[Op]) -> None:
    """Delete the items not kept and append `added`, keeping the separators right."""
    if not any(keep):
        body = [style.item(k, v, level + 1) for k, v in added]
        if not body:
            inside = ""
        elif style.compact:
            inside = style.item_sep.join(body)
        else:
            pad = style.eol + style.unit * (level + 1)
            inside = pad + ("," + pad).join(body) + style.eol + style.unit * level
        ops.append((start + 1, close, inside))
        return
    last = max(n for n, k in enumerate(keep) if k)
    for n in range(last):
        if not keep[n]:  # up to the next item
            ops.append((items[n][1], items[n + 1][1], ""))
    if last + 1 < len(items):  # what follows the last kept item, with its comma
        ops.append((items[last][3], items[-1][3], ""))
    if added:
        at = items[last][3]
        ops.append((at, at, "".join(style.sep(level + 1) + style.item(k, v, level + 1)
                                    for k, v in added)))


def _edit(text: str, v_start: int, v_end: int, old: Any, new: Any, level: int,
          style: _Style, ops: list[Op]) -> None:
    """Queue the edits turning the value at text[v_start:v_end] (`old`) into `new`."""
    if old == new and type(old) is type(new):
        return
    if isinstance(old, dict) and isinstance(new, dict):
        items, close = _items(text, v_start)
        if len({k for k, *_ in items}) != len(items):
            raise ValueError("a duplicate key")
        keep = [k in new for k, *_ in items]
        if [k for k, *_ in items if k in new] != [k for k in new if k in old]:
            raise ValueError("keys reordered")
        for key, _, a, b in items:
            if key in new:
                _edit(text, a, b, old[key], new[key], level + 1, style, ops)
        _edit_seq(text, v_start, items, close, keep,
                  [(k, v) for k, v in new.items() if k not in old], level, style, ops)
        return
    if isinstance(old, list) and isinstance(new, list):
        items, close = _items(text, v_start)
        if len(old) == len(new):
            for (_, _, a, b), o, n in zip(items, old, new, strict=True):
                _edit(text, a, b, o, n, level + 1, style, ops)
            return
        keep, j = [], 0
        for o in old:  # keep the old elements new has, in order; the rest go
            hit = j < len(new) and new[j] == o
            keep.append(hit)
            j += hit
        _edit_seq(text, v_start, items, close, keep, [(None, v) for v in new[j:]],
                  level, style, ops)
        return
    ops.append((v_start, v_end, style.dump(new, level)))


def _spliced(text: str, want: dict, style: _Style) -> str:
    start = _WS.match(text).end()
    _, end = json.JSONDecoder().raw_decode(text, start)
    ops: list[Op] = []
    _edit(text, start, end, json.loads(text), want, 0, style, ops)
    out = text
    for a, b, repl in sorted(ops, key=lambda op: op[0], reverse=True):
        out = out[:a] + repl + out[b:]
    return out


def apply_hooks(text: str, hooks: dict | None) -> str:
    """`text` (a JSON object, or empty) with its ``hooks`` member set to `hooks`
    (None: removed), every byte not in a changed value kept."""
    return apply_member(text, "hooks", hooks)


def apply_member(text: str, key: str, value: Any) -> str:
    """`text` (a JSON object, or empty) with its top-level `key` member set to `value`
    (None: removed), every byte not in a changed value kept (``.mcp.json``'s
    ``mcpServers`` is edited so too)."""
    style = _Style(text)
    if not text.strip() or json.loads(text) == {}:  # nothing to keep: Claude Code's style
        data = {} if value is None else {key: value}
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    want = json.loads(text)
    if value is None:
        want.pop(key, None)
    else:
        want[key] = value
    try:
        out = _spliced(text, want, style)
        if json.loads(out) == want:
            return out
    except (ValueError, IndexError):
        pass
    tail = text[len(text.rstrip()):]
    return style.dump(want, 0) + (tail or style.eol)
