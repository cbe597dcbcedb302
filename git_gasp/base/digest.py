"""Git's blob hasher and the checks of hex object ids."""

from __future__ import annotations

_HEX_DIGITS = b"0123456789abcdef"


def is_hex(value: bytes, *lengths: int) -> bool:
    """True when `value` is lowercase hex digits, as many as one of `lengths` (any count
    when none is given, but at least one digit)."""
    return (len(value) in lengths if lengths else bool(value)) and not value.strip(_HEX_DIGITS)


def is_object_id(value: bytes) -> bool:
    """True for a lowercase hex git object id: 40 (sha1) or 64 (sha256) digits."""
    return is_hex(value, 40, 64)
