"""YAML front matter that is edited, not re-serialised: unknown fields survive.

A document is `---\\n<yaml>\\n---\\n<body>`. `FrontMatter` keeps the original
lines grouped into one block per top-level key; setting a key replaces only that
key's block, so every other field (unknown ones, comments, their formatting)
comes back byte for byte. Values are loaded with a YAML 1.1 safe loader that
leaves dates as strings (`2026-07-14` stays text, as Perstate's scripts treat it).

`fast_fields` is a loader for the index build: it reads the simple one-line
`key: value` form every Perstate file uses and returns None for anything else,
so the caller falls back to the YAML loader.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from git_gasp.base.errors import GaspError
from git_gasp.base.outside import why_unreadable

_KEY_LINE = re.compile(r"^([^\s#\-\[\]{}'\"][^:]*?):(?:[ \t]|$)")
_FAST_LINE = re.compile(r"^([A-Za-z_][\w-]*):(?:[ \t]+(.*?))?[ \t]*$")
_PLAIN_OK = re.compile(r"^[^\s\"'\[\]{}#&*!|>%@`,][^\"'\[\]{}#,]*$")
_loader_cls: Any = None


def _loader() -> Any:
    """A safe YAML loader (C-accelerated when available) without timestamp resolution."""
    global _loader_cls
    if _loader_cls is None:
        base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

        class NoDateLoader(base):  # type: ignore[misc, valid-type]
            pass

        NoDateLoader.yaml_implicit_resolvers = {
            ch: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
            for ch, resolvers in base.yaml_implicit_resolvers.items()
        }
        _loader_cls = NoDateLoader
    return _loader_cls


def _refuse_aliases(text: str) -> None:
    """Refuse YAML anchors and aliases before anything is built: front matter never
    needs them, and an alias bomb (aliases of aliases) would expand past any memory.
    Only tokens are scanned (linear in the text); most texts hold neither & nor *."""
    if "&" not in text and "*" not in text:
        return
    for token in yaml.scan(text, Loader=_loader()):
        if isinstance(token, (yaml.AnchorToken, yaml.AliasToken)):
            kind = "anchor" if isinstance(token, yaml.AnchorToken) else "alias"
            raise GaspError(f"YAML {kind} &/* at line {token.start_mark.line + 1} refused: "
                            "front matter may not use anchors or aliases")


def load_yaml(text: str) -> Any:
    """Parse YAML text (dates stay strings); raise GaspError on a syntax error."""
    try:
        _refuse_aliases(text)
        return yaml.load(text, Loader=_loader())  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise GaspError(f"invalid YAML: {' '.join(str(exc).split())}") from None
    except (ValueError, RecursionError) as exc:  # a number past Python's digit limit, …
        raise GaspError(f"invalid YAML: {why_unreadable(exc)}") from None


def split(text: str) -> tuple[str | None, str]:
    """(front matter text or None, body). The body keeps its leading newline, if any."""
    if not (text.startswith("---\n") or text.startswith("---\r\n")):
        return None, text
    start = text.index("\n") + 1
    pos = start
    while True:
        nl = text.find("\n", pos)
        line = text[pos:] if nl < 0 else text[pos:nl]
        if line.rstrip("\r") in ("---", "..."):
            return text[start:pos], ("" if nl < 0 else text[nl + 1 :])
        if nl < 0:
            return None, text  # no closing delimiter: not front matter
        pos = nl + 1


def render_scalar(value: Any, *, flow: bool = False, quote: bool = False) -> str:
    """A YAML rendering of one value that loads back to exactly `value`."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, str):
        if not quote and _plain_roundtrips(value, flow):
            return value
        return _dq(value)
    if isinstance(value, (list, tuple)):
        return render_list(list(value), quote=quote)
    return json.dumps(value, ensure_ascii=False, default=str)


def _dq(value: str) -> str:
    """A YAML double-quoted scalar: JSON escapes, plus \\u escapes for anything unprintable."""
    text = json.dumps(value, ensure_ascii=False)
    if all(ch.isprintable() for ch in text):
        return text
    return "".join(
        ch if ch.isprintable() else (
            f"\\u{ord(ch):04x}" if ord(ch) < 0x10000 else f"\\U{ord(ch):08x}"
        )
        for ch in text
    )


def render_list(items: list[Any], *, quote: bool = False) -> str:
    """Flow-style list, Perstate's style: `[a, b]`, or `["a", "b"]` with quote=True."""
    return "[" + ", ".join(render_scalar(i, flow=True, quote=quote) for i in items) + "]"


def _plain_roundtrips(value: str, flow: bool) -> bool:
    if not value or value != value.strip() or "\n" in value or "\r" in value:
        return False
    if flow and any(c in value for c in ",[]{}"):
        return False
    if not _PLAIN_OK.match(value) or ": " in value or " #" in value or value.endswith(":"):
        return False
    probe = f"k: [{value}]" if flow else f"k: {value}"
    try:
        got = load_yaml(probe)
    except GaspError:
        return False
    return got == {"k": [value] if flow else value}


class FrontMatter:
    """Front matter as ordered key blocks; edits touch only the keys they set."""

    def __init__(self, text: str = "") -> None:
        self.preamble: list[str] = []  # lines before the first key
        self.trailer: list[str] = []  # comment/blank lines after the last key
        # [key, prefix lines (comments/blanks above it), the key's own lines]
        self.blocks: list[tuple[str, list[str], list[str]]] = []
        pending: list[str] = []
        for line in text.splitlines():
            m = _KEY_LINE.match(line)
            if m:
                self.blocks.append((m.group(1).strip(), pending, [line]))
                pending = []
            elif not line.strip() or line.startswith("#"):
                pending.append(line)
            elif self.blocks:
                self.blocks[-1][2].extend(pending)
                self.blocks[-1][2].append(line)
                pending = []
            else:
                self.preamble.extend(pending)
                self.preamble.append(line)
                pending = []
        self.trailer = pending
        data = load_yaml(text) if text.strip() else {}
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise GaspError("front matter is not a YAML mapping")
        self.data: dict[str, Any] = {str(k): v for k, v in data.items()}
        keys = [k for k, _, _ in self.blocks]
        if sorted(keys) != sorted(self.data) or len(set(keys)) != len(keys):
            # Line grouping disagrees with YAML (exotic syntax): re-render everything
            # from the parsed data, which still keeps every field and its value.
            self.preamble, self.trailer = [], []
            self.blocks = [(k, [], [f"{k}: {render_scalar(v)}"]) for k, v in self.data.items()]

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    def __contains__(self, key: str) -> bool:
        return key in self.data

    def set(self, key: str, value: Any, *, quote: bool = False, after: str | None = None) -> None:
        """Set `key`, replacing its block in place, or adding it (after `after` if present)."""
        line = f"{key}: {render_scalar(value, quote=quote)}"
        self.data[key] = value
        for i, (k, prefix, _) in enumerate(self.blocks):
            if k == key:
                self.blocks[i] = (key, prefix, [line])
                return
        pos = len(self.blocks)
        if after is not None:
            for i, (k, _, _) in enumerate(self.blocks):
                if k == after:
                    pos = i + 1
        self.blocks.insert(pos, (key, [], [line]))

    def text(self) -> str:
        lines = list(self.preamble)
        for _, prefix, block in self.blocks:
            lines.extend(prefix)
            lines.extend(block)
        lines.extend(self.trailer)
        return "\n".join(lines) + "\n" if lines else ""


def parse_document(text: str) -> tuple[FrontMatter, str]:
    """(front matter, body) of a Markdown file; a file without front matter has none."""
    fm_text, body = split(text)
    return FrontMatter(fm_text or ""), body


def render_document(fm: FrontMatter, body: str) -> str:
    return "---\n" + fm.text() + "---\n" + body


def _fast_value(v: str) -> tuple[bool, Any]:
    if v in ("", "null", "~", "Null", "NULL"):
        return True, None
    c = v[0]
    if c == "[":
        if not v.endswith("]"):
            return False, None
        inner = v[1:-1].strip()
        if not inner:
            return True, []
        if '"' in inner:
            try:
                got = json.loads(v)
            except ValueError:
                return False, None
            ok = isinstance(got, list) and all(isinstance(x, str) for x in got)
            return ok, got
        if any(ch in inner for ch in "'[]{}#&*!|>"):
            return False, None
        return True, [p.strip() for p in inner.split(",")]
    if c == '"':
        try:
            got = json.loads(v)
        except ValueError:
            return False, None
        return isinstance(got, str), got
    if c in "'{&*!|>%@`#" or " #" in v or ": " in v:
        return False, None
    return True, v


def fast_fields(fm_text: str) -> dict[str, Any] | None:
    """Simple `key: value` front matter without YAML; None when it needs the real parser.

    Scalars come back as strings (`true` stays "true"), `null`/empty as None, flow
    lists of plain or double-quoted strings as lists. Enough for indexing.
    """
    out: dict[str, Any] = {}
    for line in fm_text.split("\n"):
        if not line or line.startswith("#"):
            continue
        m = _FAST_LINE.match(line.rstrip("\r"))
        if not m:
            return None
        ok, val = _fast_value(m.group(2) or "")
        if not ok or m.group(1) in out:
            return None
        out[m.group(1)] = val
    return out


def lenient_fields(fm_text: str | None) -> dict[str, Any]:
    """The fields of front matter `fm_text` for reading, never raising: the fast parser,
    else YAML, else nothing (a broken file is still indexed and shown by its text)."""
    if not fm_text:
        return {}
    fields = fast_fields(fm_text)
    if fields is None:
        try:
            fields = load_yaml(fm_text)
        except Exception:  # noqa: BLE001 - a broken or refused front matter has no fields
            fields = {}
    return fields if isinstance(fields, dict) else {}
