"""The one TOML import (``tomllib``; ``tomli`` on Python < 3.11) and the one way a TOML
document from outside is parsed: every failure (a syntax error, bytes that are not
UTF-8, a number of too many digits, nesting past the stack) is one `FormatError` line."""

from __future__ import annotations

import sys

from git_gasp.base.errors import FormatError
from git_gasp.base.outside import why_unreadable

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["load_toml", "tomllib"]


def load_toml(data: bytes | str, what: str) -> dict[str, object]:
    """The TOML document `data`; FormatError ``WHAT does not parse: …`` otherwise."""
    try:
        return tomllib.loads(data if isinstance(data, str) else data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:  # TOMLDecodeError too
        raise FormatError(f"{what} does not parse: {why_unreadable(exc)}") from None
