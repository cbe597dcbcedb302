"""Git (SHA-1) object ids computed from bytes, without the object database: the one home
of ``sha1(b"blob <len>\\0" + data)`` (and of any other type's header), and the proof
it gives that new bytes extend a committed blob whose id and length are known (the old
blob is never read)."""

from __future__ import annotations

import hashlib
from typing import Any


def blob_hasher(length: int) -> Any:
    """A SHA-1 object fed git's header of a `length`-byte blob: feed it the blob's bytes
    and its hex digest is the blob's (sha1) git id."""
    return hashlib.sha1(b"blob %d\x00" % length)


def blob_id(data: bytes | memoryview) -> bytes:
    """The (sha1) git blob id of `data`, as hex bytes."""
    return object_id(b"blob", data)


def object_id(kind: bytes, data: bytes | memoryview) -> bytes:
    """The (sha1) git id of an object of type `kind` (b"commit", b"tree", b"blob",
    b"tag") and content `data`, as hex bytes."""
    digest = hashlib.sha1(b"%s %d\x00" % (kind, len(data)))
    digest.update(data)
    return digest.hexdigest().encode()


def extends_by_hash(old_sha: bytes, length: int, new: bytes) -> bool:
    """True if `new` provably extends the git blob `old_sha` of `length` bytes.

    A (sha1) blob id is the sha1 of b"blob <len>\\0" and its bytes, so hashing
    new[:length] that way proves the prefix (sha256 object ids: never). Also the
    one-parent rule's newline: an unterminated last line is not extended.
    """
    if len(old_sha) != 40 or len(new) < length:
        return False
    if blob_id(memoryview(new)[:length]) != old_sha:
        return False
    return length == 0 or new[length - 1] == 0x0A or len(new) == length or new[length] == 0x0A
