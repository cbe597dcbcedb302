"""Hashes and object ids: ``hashlib``'s SHA-1 and SHA-256, imported when first asked
for (the CLI's start and paths that hash nothing never load OpenSSL), and the checks of
hex object ids.

A short SHA-256 (the agent hook's digests of a tool call, a redacted secret, a file's
contents) comes from the interpreter's built-in ``_sha2`` (``_sha256`` before 3.12)
while ``hashlib`` is not loaded: loading it initialises OpenSSL, 11 M instructions, 5 %
of the hook. The digest is the same; OpenSSL's is only faster on long inputs."""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def sha1(data: bytes = b"") -> Any:
    """``hashlib.sha1(data)``."""
    import hashlib

    return hashlib.sha1(data)


_SHORT = 1 << 16  # bytes hashed by the built-in module rather than OpenSSL


def sha256(data: bytes = b"") -> Any:
    """``hashlib.sha256(data)``."""
    if data and len(data) <= _SHORT and "hashlib" not in sys.modules:
        try:
            from _sha2 import sha256 as builtin
        except ImportError:
            try:
                from _sha256 import sha256 as builtin  # Python < 3.12
            except ImportError:  # an interpreter built without it
                builtin = None
        if builtin is not None:
            return builtin(data)
    import hashlib

    return hashlib.sha256(data)


_HEX_DIGITS = b"0123456789abcdef"


def is_hex(value: bytes, *lengths: int) -> bool:
    """True when `value` is lowercase hex digits, as many as one of `lengths` (any count
    when none is given, but at least one digit)."""
    return (len(value) in lengths if lengths else bool(value)) and not value.strip(_HEX_DIGITS)


def is_object_id(value: bytes) -> bool:
    """True for a lowercase hex git object id: 40 (sha1) or 64 (sha256) digits."""
    return is_hex(value, 40, 64)
