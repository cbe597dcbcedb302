"""Strict JSON for log lines: no duplicate keys, no NaN/Infinity, integers within 64 bits.

`loads_strict` is the fast path: orjson parses, and a line whose compact re-encoding
equals its raw bytes cannot hold a duplicate key or a non-canonical number. Lines that
differ take the slow stdlib path with hooks that reject what orjson silently accepts.

orjson loads only once a process has asked for it `STDLIB_CALLS` times (`orjson_module`;
a line asks once or twice): importing it (and the ``dataclasses``, ``uuid`` and
``datetime`` it imports) costs more than parsing a hundred lines the slow way, which is
more than a re-check after one commit parses. Both ways reach the same verdict on every
line.
"""

from __future__ import annotations

import json
import math
from typing import Any

from git_gasp.base.errors import FormatError

STDLIB_CALLS = 256  # asks answered the slow way before orjson is worth its import
_orjson: Any = None  # the module once loaded; False when it cannot be
_parsed = 0


def orjson_module() -> Any:
    """orjson once this process has asked for it `STDLIB_CALLS` times, else None (also
    when it is not installed: the stdlib path keeps every verdict the same without it)."""
    global _orjson, _parsed
    if _orjson is None:
        _parsed += 1
        if _parsed <= STDLIB_CALLS:
            return None
        try:  # a declared dependency
            import orjson
        except ImportError:  # pragma: no cover
            orjson = False
        _orjson = orjson
    return _orjson or None

INT_MIN = -(2**63)
INT_MAX = 2**64 - 1  # serde_json reads u64 and i64; anything wider loses precision.
_INT_DIGITS = len(str(INT_MAX))  # JSON has no leading zeros: more digits is out of range
# Deepest nesting of arrays/objects a line may have (the envelope object is level 1).
# serde_json, the reference reader, refuses a 128th level; a fixed limit also makes
# acceptance independent of the caller's stack depth and keeps the recursive fold safe.
MAX_DEPTH = 127
_TOO_DEEP = f"JSON nested too deeply (more than {MAX_DEPTH} levels)"


class JsonError(FormatError):
    """A line is not strict JSON; the message says why."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict:
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise JsonError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _constant(name: str) -> Any:
    raise JsonError(f"{name} is not valid JSON")


def _int(text: str) -> int:
    if len(text) - text.startswith("-") > _INT_DIGITS:  # before int(): no 4300-digit ValueError
        raise JsonError(f"integer {text[:40]}… does not fit in 64 bits")
    value = int(text)
    if not INT_MIN <= value <= INT_MAX:
        raise JsonError(f"integer {text[:40]} does not fit in 64 bits")
    return value


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JsonError(f"number {text[:40]} is out of range")
    return value


_DECODER = json.JSONDecoder(
    object_pairs_hook=_pairs, parse_constant=_constant, parse_int=_int, parse_float=_float
)


def loads_slow(raw: bytes) -> Any:
    """Parse with every strict rule checked explicitly (raises JsonError)."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raise JsonError("starts with a UTF-8 byte order mark (BOM)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JsonError(f"invalid UTF-8 at byte {exc.start}") from None
    try:
        value, end = _DECODER.raw_decode(text, _skip_ws(text, 0))
    except JsonError:
        raise
    except json.JSONDecodeError as exc:
        msg = exc.msg.removesuffix(" at")  # "Unterminated string starting at"
        raise JsonError(f"invalid JSON: {msg} at column {exc.colno}") from None
    except RecursionError:
        raise JsonError(_TOO_DEEP) from None
    if _skip_ws(text, end) != len(text):
        raise JsonError(f"unexpected data after the JSON value at column {end + 1}")
    try:
        dumps_canonical(value)
    except JsonError:
        raise JsonError("a string holds a lone UTF-16 surrogate escape") from None
    return value


def _check_depth(raw: bytes, value: Any) -> Any:
    """Return value, or raise JsonError if it nests deeper than MAX_DEPTH (iterative)."""
    if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:  # cheap bound: no walk needed
        return value
    stack = [(value, 1)] if type(value) in (dict, list) else []
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise JsonError(_TOO_DEEP)
        for child in node.values() if type(node) is dict else node:
            if type(child) is dict or type(child) is list:
                stack.append((child, depth + 1))
    return value


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\n\r":
        pos += 1
    return pos


def loads_strict(raw: bytes) -> Any:
    """Parse one line strictly; raises JsonError."""
    fast = orjson_module()
    if fast is None:
        return _check_depth(raw, loads_slow(raw))
    try:
        value = fast.loads(raw)
    except (fast.JSONDecodeError, RecursionError):
        return _check_depth(raw, loads_slow(raw))
    try:
        if fast.dumps(value) == raw:
            return _check_depth(raw, value)
    except (TypeError, RecursionError):
        pass
    return _check_depth(raw, loads_slow(raw))


def unwritable(value: Any, where: str = "payload", depth: int = 2) -> str | None:
    """Why `value` (at `where`, nested `depth` levels deep in its line) could not be
    read back by `loads_strict`, naming the field; None when it can.

    What the checker refuses, the writer must refuse first: non-JSON types, integers
    beyond 64 bits, NaN and infinities, lone surrogates, nesting past MAX_DEPTH.
    """
    stack: list[tuple[Any, str, int]] = [(value, where, depth)]
    while stack:
        node, path, level = stack.pop()
        kind = type(node)
        if node is None or kind is bool:
            continue
        if kind is int:
            if not INT_MIN <= node <= INT_MAX:
                return f"{path}: integer {str(node)[:40]} does not fit in 64 bits"
        elif kind is float:
            if not math.isfinite(node):
                return f"{path}: {node} is not a JSON number"
        elif kind is str:
            if not _encodable(node):
                return f"{path}: the text holds a lone UTF-16 surrogate"
        elif kind is dict or kind is list:
            if level > MAX_DEPTH:
                return f"{path}: nested too deeply (more than {MAX_DEPTH} levels in the line)"
            if kind is list:
                stack.extend((item, f"{path}[{i}]", level + 1) for i, item in enumerate(node))
                continue
            for key, item in node.items():
                if type(key) is not str:
                    return f"{path}: key {key!r} is not a string"
                if not _encodable(key):
                    return f"{path}: a key holds a lone UTF-16 surrogate"
                stack.append((item, f"{path}.{key}", level + 1))
        else:
            return f"{path}: {kind.__name__} is not a JSON value"
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                              allow_nan=False)  # built once: half the cost of json.dumps


def dumps_canonical(value: Any) -> bytes:
    """The one canonical JSON writer (DESIGN.md section 3): key-sorted recursively,
    compact separators, raw UTF-8, no NaN; JsonError naming what cannot be written."""
    try:
        return _CANONICAL.encode(value).encode("utf-8")
    except RecursionError:
        raise JsonError("JSON nested too deeply") from None
    except (ValueError, TypeError, UnicodeEncodeError) as exc:
        raise JsonError(unwritable(value, "value", 1) or f"not writable as JSON: {exc}") from None


def json_equal(a: Any, b: Any) -> bool:
    """Structural JSON equality that tells true from 1 and 1 from 1.0."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, dict):
            if x.keys() != y.keys():
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif isinstance(x, list):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif x != y:
            return False
    return True
