"""The identity hash: SHA-256 over each identity/ file's path, b"\\n", then its bytes.

Files are taken in byte-order-sorted relative path order (paths like
b"identity/IDENTITY.md"), matching the spec's shell recipe.
"""

from __future__ import annotations

from collections.abc import Iterable
from hashlib import sha256

from git_gasp.base.digest import is_hex


def identity_hash(files: Iterable[tuple[bytes, bytes]]) -> str:
    """Hex digest over (relative path, content) pairs, sorted by path bytes."""
    h = sha256()
    for path, content in sorted(files):
        h.update(path)
        h.update(b"\n")
        h.update(content)
    return h.hexdigest()


def normalize_declared(value: object) -> str | None:
    """The 64-hex digest of a manifest's identity_hash ("sha256:" prefix allowed), else None."""
    if not isinstance(value, str):
        return None
    digest = value.strip().lower()
    digest = digest[7:] if digest.startswith("sha256:") else digest
    return digest if digest.isascii() and is_hex(digest.encode(), 64) else None
