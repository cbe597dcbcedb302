"""Parsing text that comes from outside (a committed file, a payload, an import) with the
standard parsers, so that every way they can fail is one `FormatError` line: a syntax
error, bytes that are not UTF-8, an integer of more digits than Python converts
(``sys.get_int_max_str_digits``, a ValueError) or nesting deeper than the stack (a
RecursionError). `load_json` reads JSON an agent wrote whatever its bytes (invalid
UTF-8, lone surrogates, non-finite numbers), as text the log can hold. (Log lines have
their own strict parser: ``protocol.jsonstrict``.)"""

from __future__ import annotations

import json
import re
from typing import Any

from git_gasp.base.errors import FormatError


def why_unreadable(exc: BaseException) -> str:
    """One line for what a standard parser raised: nesting past the stack, a number of
    more digits than Python converts, else the parser's own first words."""
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    text = str(exc)
    if "integer string conversion" in text:
        return "a number has too many digits"
    return " ".join(text.split())[:200] or type(exc).__name__


# --- JSON an agent wrote: read whatever its encoding, made fit for the log -----------------

_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1  # what a log line may hold (protocol.jsonstrict)
_INF = float("inf")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """`text` with each lone UTF-16 surrogate (what JSON's ``\\ud83d`` decodes to: Node's
    ``JSON.stringify`` of a string cut mid-emoji) replaced by U+FFFD, so it encodes as
    UTF-8. A valid pair never reaches here: the JSON decoder joins it."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("\ufffd", text)


def _number(text: str) -> Any:
    value = float(text)  # a 5,000-digit number is inf, never a ValueError
    return value if -_INF < value < _INF else None


def _integer(text: str) -> Any:
    if len(text) <= 20:
        value = int(text)
        if _INT_MIN <= value <= _INT_MAX:
            return value
    return _number(text)


def load_json(data: bytes, what: str) -> Any:
    """The JSON document `data`, read as leniently as its text allows and made fit for
    the log. The rule: the encoding JSON's own detection names (UTF-8, or UTF-16/32 when
    the bytes say so; a byte-order mark dropped), every byte sequence that is not valid
    in it and every lone surrogate, in a string or a key, read as U+FFFD; control
    characters inside strings kept; NaN, ±Infinity and numbers beyond a double's range
    read as null (what ``JSON.stringify`` writes for them); integers beyond 64 bits as
    the nearest double. FormatError ``WHAT is not JSON: …`` when no JSON is there."""
    try:
        text = data.decode(json.detect_encoding(data), "replace")
        value = json.loads(text.removeprefix("\ufeff"), strict=False, parse_float=_number,
                           parse_int=_integer, parse_constant=lambda _: None)
    except (ValueError, RecursionError) as exc:
        raise FormatError(f"{what} is not JSON: {why_unreadable(exc)}") from None
    # only a \\uD800-\\uDFFF escape decodes to a surrogate (invalid bytes read as U+FFFD)
    return _valid(value) if "\\ud" in text or "\\uD" in text else value


def _valid(value: Any) -> Any:
    """`value` with `valid_text` applied to every string and key (iterative, any depth;
    containers whose text is valid are kept as they are)."""
    if isinstance(value, str):
        return valid_text(value)
    if not isinstance(value, (dict, list)):
        return value
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            for i, item in enumerate(node):
                if isinstance(item, str):
                    node[i] = valid_text(item)
                elif isinstance(item, (dict, list)):
                    stack.append(item)
            continue
        for key in [k for k in node if valid_text(k) is not k]:
            node[valid_text(key)] = node.pop(key)
        for key, item in node.items():
            if isinstance(item, str):
                node[key] = valid_text(item)
            elif isinstance(item, (dict, list)):
                stack.append(item)
    return value
