"""A log's bytes for the checks: all of it in memory, or the file read in ranges, so a
cached re-check reads only the lines after its saved state (and the few old lines an
index hit sends it to), never the whole file."""

from __future__ import annotations

import os
from hashlib import sha256

from git_gasp.base.fileops import open_regular
from git_gasp.odb.blobid import blob_hasher

_CHUNK = 1 << 20


def _pread(fd: int, size: int, offset: int) -> bytes:
    if hasattr(os, "pread"):
        return os.pread(fd, size, offset)
    os.lseek(fd, offset, os.SEEK_SET)  # pragma: no cover - Windows
    return os.read(fd, size)


class LogSource:
    """The first `size` bytes of a log: `data` in memory, or the open file `fd`."""

    def __init__(self, data: bytes | None = None, fd: int | None = None,
                 size: int | None = None) -> None:
        self.data, self.fd = data, fd
        self.size = len(data) if data is not None else (size or 0)
        self._tail_at = self.size
        self._tail = b""

    @classmethod
    def of_bytes(cls, data: bytes) -> LogSource:
        return cls(data=data)

    @classmethod
    def open(cls, path: str) -> LogSource:
        """The regular file at `path` (not followed if it is a symlink); raises OSError."""
        fd = open_regular(path)  # FileNotFoundError, NotARegularFile: both OSErrors
        return cls(fd=fd, size=os.fstat(fd).st_size)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __enter__(self) -> LogSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def tail(self, start: int) -> bytes:
        """Bytes [start, size), kept so that `read` serves later reads of them."""
        data = self.read(start, self.size)
        if self.data is None:
            self._tail_at, self._tail = start, data
            self.size = start + len(data)  # a file that shrank meanwhile: what is there
        return data

    def read(self, start: int, end: int) -> bytes:
        """Bytes [start, end) (fewer if the file is shorter)."""
        end = min(end, self.size)
        if start >= end:
            return b""
        if self.data is not None:
            return self.data[start:end]
        if start >= self._tail_at:
            return self._tail[start - self._tail_at:end - self._tail_at]
        assert self.fd is not None
        out = []
        while start < end:
            piece = _pread(self.fd, min(end - start, 1 << 30), start)
            if not piece:
                break
            out.append(piece)
            start += len(piece)
        return b"".join(out)

    def _digest(self, digest, length: int) -> bool:
        """Feed bytes [0, length) to `digest`; False if the log is shorter."""
        if self.data is not None:
            if len(self.data) < length:
                return False
            digest.update(memoryview(self.data)[:length])
            return True
        at = 0
        while at < length:
            piece = self.read(at, min(length, at + _CHUNK))
            if not piece:
                return False
            digest.update(piece)
            at += len(piece)
        return True

    def blob_id(self, length: int) -> bytes | None:
        """The git (sha1) blob id of bytes [0, length), or None if there are fewer."""
        digest = blob_hasher(length)
        return digest.hexdigest().encode() if self._digest(digest, length) else None

    def sha256(self, length: int) -> str | None:
        """The sha256 hex digest of bytes [0, length), or None if there are fewer."""
        digest = sha256()
        return digest.hexdigest() if self._digest(digest, length) else None
