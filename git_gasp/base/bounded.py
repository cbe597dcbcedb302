"""The one bounded loader of JSON and TOML read from a repository (agent settings,
`.mcp.json`, `.codex/config.toml`, hook managers' configs): a size limit before
parsing, the parser's own failures (a syntax error, nesting past the stack) and
nesting deeper than `MAX_DEPTH` levels after it, each a one-line `FormatError`. A
settings file 100,000 levels deep is refused, never a RecursionError in the parser or
in the code that walks, compares or writes back what it gave."""

from __future__ import annotations

import json
from typing import Any

from git_gasp.base.errors import FormatError
from git_gasp.base.outside import why_unreadable
from git_gasp.base.toml import tomllib

MAX_DEPTH = 100  # levels of arrays and objects (tables): far past any honest settings file
MAX_BYTES = 4 << 20  # a settings file larger than this is not one


INT64 = (-(2**63), 2**63 - 1)  # TOML's integers: one outside is an error (TOML 1.0)


def depth(value: Any) -> int:
    """How deeply `value` nests lists and dicts (a scalar: 0), walked without recursion."""
    return _walk(value)[0]


def _walk(value: Any) -> tuple[int, int | None]:
    """(depth, an integer outside int64 when there is one)."""
    deepest, wide = 0, None
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            if type(item) is int and not INT64[0] <= item <= INT64[1]:
                wide = item
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children)
    return deepest, wide


def _text(data: str | bytes, what: str, max_bytes: int) -> str:
    if len(data) > max_bytes:
        raise FormatError(f"{what} is larger than {max_bytes} bytes")
    if isinstance(data, bytes):
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise FormatError(f"{what} is not UTF-8 text") from None
    return data


def bounded(value: Any, what: str, max_depth: int = MAX_DEPTH, *,
            int64: bool = False) -> Any:
    """`value`, or FormatError when it nests deeper than `max_depth` levels (for what
    another parser gave, YAML say) or, with `int64`, holds an integer outside int64."""
    deepest, wide = _walk(value)
    if deepest > max_depth:
        raise FormatError(f"{what} nests deeper than {max_depth} levels")
    if int64 and wide is not None:
        raise FormatError(f"{what} holds an integer outside 64 bits")
    return value


def load_json(data: str | bytes, what: str, *, max_depth: int = MAX_DEPTH,
              max_bytes: int = MAX_BYTES) -> Any:
    """The JSON document `data` (`what` names it in a refusal)."""
    text = _text(data, what, max_bytes)
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise FormatError(f"{what} is not valid JSON ({why_unreadable(exc)})") from None
    return bounded(value, what, max_depth)


def load_toml(data: str | bytes, what: str, *, max_depth: int = MAX_DEPTH,
              max_bytes: int = MAX_BYTES) -> dict[str, Any]:
    """The TOML document `data` (`what` names it in a refusal)."""
    text = _text(data, what, max_bytes)
    try:
        value = tomllib.loads(text)
    except (ValueError, RecursionError) as exc:  # TOMLDecodeError is a ValueError
        raise FormatError(f"{what} is not valid TOML ({why_unreadable(exc)})") from None
    return bounded(value, what, max_depth, int64=True)
