"""YAML front matter without importing PyYAML, for the documents that need nothing more
than flat `key: value` lines (AGENT.md's manifest block, most SKILL.md headers).

`load_flat` reads only a subset whose meaning under YAML 1.1 (PyYAML's `safe_load`) is
certain, and returns None for anything else, so the caller falls back to `yaml`: a
value is a decimal integer, a double-quoted string without escapes, a plain string
that starts with a letter, `_`, `/` or `.` and a letter and holds none of YAML's
indicators (and is no bool or null word), or a hex digest. The tests compare it with
`yaml.safe_load` on generated text.
"""

from __future__ import annotations

import re
from typing import Any

from git_gasp.base.outside import why_unreadable

_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?:[ ]+(.*?))?[ ]*")
_INT = re.compile(r"0|[1-9][0-9]{0,17}")
_PLAIN = re.compile(r"(?:[A-Za-z_/]|\.[A-Za-z])[A-Za-z0-9 _./,()'+=?!;@$~^-]*")
_HEX = re.compile(r"[0-9a-f]*[a-f][0-9a-f]*")
_QUOTED = re.compile(r'"([^"\\\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff]*)"')
# Words YAML 1.1 resolves to a bool or null (compared case-insensitively: conservative).
_WORDS = frozenset(("yes", "no", "true", "false", "on", "off", "null", "y", "n", ".inf", ".nan"))


def load_flat(text: str) -> dict[str, Any] | None:
    """The mapping flat YAML `text` holds, or None when it needs a real YAML parser."""
    out: dict[str, Any] = {}
    for line in text.split("\n"):
        if not line.strip(" "):
            continue
        if line[0] == "#":
            continue
        m = _LINE.fullmatch(line)
        if m is None:
            return None
        key, raw = m.group(1), m.group(2)
        if key in out or key.lower() in _WORDS:
            return None
        value = _value(raw)
        if value is _NO:
            return None
        out[key] = value
    return out


_NO = object()


def _value(raw: str | None) -> Any:
    if raw is None or raw == "":
        return None
    if _INT.fullmatch(raw):
        return int(raw)
    c = raw[0]
    if c == '"':
        m = _QUOTED.fullmatch(raw)
        return _NO if m is None else m.group(1)
    if "a" <= c.lower() <= "z" or c in "_/.":
        if raw.lower() in _WORDS or raw.endswith(" ") or _PLAIN.fullmatch(raw) is None:
            return _NO
        return raw
    if "0" <= c <= "9" and not raw.startswith("0b") and _HEX.fullmatch(raw):
        return raw  # neither int, float (no '.' or ':') nor timestamp (no '-') in YAML 1.1
    return _NO


def load(text: str, error: type[Exception], what: str) -> Any:
    """`text`'s YAML (`load_flat` when it can, else PyYAML's safe loader); a syntax error
    raises `error` with one line: ``WHAT does not parse: <yaml's first line>``."""
    flat = load_flat(text)
    if flat:
        return flat
    import yaml  # lazy: 12 ms of the pre-commit guard's imports, which reads flat manifests

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise error(f"{what} does not parse: {str(exc).splitlines()[0]}") from None
    except (ValueError, RecursionError) as exc:  # a number past Python's digit limit, or
        raise error(f"{what} does not parse: {why_unreadable(exc)}") from None  # deep nesting

