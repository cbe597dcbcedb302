"""Parsing text that comes from outside (a committed file, a payload, an import) with the
standard parsers, so that every way they can fail is one `FormatError` line: a syntax
error, bytes that are not UTF-8, an integer of more digits than Python converts
(``sys.get_int_max_str_digits``, a ValueError) or nesting deeper than the stack (a
RecursionError). (Log lines have their own strict parser: ``protocol.jsonstrict``.)"""

from __future__ import annotations

from git_gasp.base.errors import FormatError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def why_unreadable(exc: BaseException) -> str:
    """One line for what a standard parser raised: nesting past the stack, a number of
    more digits than Python converts, else the parser's own first words."""
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    text = str(exc)
    if "integer string conversion" in text:
        return "a number has too many digits"
    return " ".join(text.split())[:200] or type(exc).__name__


def load_toml(data: bytes, what: str) -> dict[str, Any]:
    """The TOML document `data`; FormatError ``WHAT does not parse: …`` otherwise."""
    try:
        import tomllib
    except ImportError:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:  # TOMLDecodeError too
        raise FormatError(f"{what} does not parse: {why_unreadable(exc)}") from None
