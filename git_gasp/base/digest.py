"""SHA-1 and SHA-256 without loading OpenSSL for a few short inputs.

``import hashlib`` initialises OpenSSL's bindings (``_hashlib``): about 11 M instructions,
more than a cached `git gasp check` spends hashing the cache keys and identity files it
needs. `sha1` and `sha256` here return CPython's built-in implementations (the same ones
``hashlib`` falls back to) for short inputs, and ``hashlib``'s for the long ones — the
log prefixes of up to gigabytes — where OpenSSL is faster. Both give the same digests.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SHORT = 1 << 20  # bytes: below this a built-in hash costs less than loading OpenSSL

try:  # CPython 3.12 and later name the module of sha224..sha512 `_sha2`
    from _sha2 import sha256 as _builtin_sha256  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - only one of the two exists on a given CPython
    try:
        from _sha256 import sha256 as _builtin_sha256  # type: ignore[import-not-found]
    except ImportError:  # another Python: hashlib it is
        _builtin_sha256 = None
try:
    from _sha1 import sha1 as _builtin_sha1  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover
    _builtin_sha1 = None


def sha1(data: bytes = b"", *, long: bool = False) -> Any:
    """A SHA-1 object fed `data`; `long`: more will follow (OpenSSL's, the faster one)."""
    if _builtin_sha1 is None or long or len(data) >= SHORT or "_hashlib" in sys.modules:
        import hashlib

        return hashlib.sha1(data)
    return _builtin_sha1(data)


def sha256(data: bytes = b"", *, long: bool = False) -> Any:
    """A SHA-256 object fed `data`; `long`: more will follow (OpenSSL's, the faster one)."""
    if _builtin_sha256 is None or long or len(data) >= SHORT or "_hashlib" in sys.modules:
        import hashlib

        return hashlib.sha256(data)
    return _builtin_sha256(data)


def blob_hasher(length: int) -> Any:
    """A SHA-1 object fed git's header of a `length`-byte blob: feed it the blob's bytes
    and its hex digest is the blob's (sha1) git id."""
    return sha1(b"blob %d\x00" % length, long=length >= SHORT)


_HEX_DIGITS = b"0123456789abcdef"


def is_hex(value: bytes, *lengths: int) -> bool:
    """True when `value` is lowercase hex digits, as many as one of `lengths` (any count
    when none is given, but at least one digit)."""
    return (len(value) in lengths if lengths else bool(value)) and not value.strip(_HEX_DIGITS)


def is_object_id(value: bytes) -> bool:
    """True for a lowercase hex git object id: 40 (sha1) or 64 (sha256) digits."""
    return is_hex(value, 40, 64)
