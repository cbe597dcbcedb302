"""The check-4 cache: commits already verified (and blob lengths at the last verified
tip), one file per (agent root, declared paths) under the common git dir.

A commit id pins its whole ancestry, so a later walk stops at a verified commit.
Anything malformed makes the whole cache empty; losing it only costs a full walk.
"""

from __future__ import annotations

import os

from git_gasp.base.digest import is_hex, sha256
from git_gasp.base.errors import GaspError
from git_gasp.base.files import atomic_write
from git_gasp.base.lazyre import LazyPattern

# 2: each commit's append-only paths from its own manifest (a moved log must extend the
# old one), and merges judged by meaning: caches made under the old rules are not trusted.
CHECKER_VERSION = 2
_CACHE_MAGIC = b"git-gasp check4 cache"


def _cache_key(prefix: bytes, declared: frozenset[bytes]) -> str:
    material = b"\x00".join([b"%d" % CHECKER_VERSION, prefix, *sorted(declared)])
    return sha256(material).hexdigest()[:20]


_CACHE_BODY = LazyPattern(rb"(?:C [0-9a-f]{40}\n)*(?:L [0-9a-f]{40} [0-9]{1,15}\n)*")


class VerifiedCache:
    """Verified commit ids (+ blob lengths at the last verified tip), one file per key."""

    def __init__(self, common_dir: str, prefix: bytes, declared: frozenset[bytes]) -> None:
        self.key = _cache_key(prefix, declared)
        self.path = os.path.join(common_dir, "gasp", f"check4-{self.key}.cache")
        self.commits: set[bytes] = set()
        self.lengths: dict[bytes, int] = {}
        self.problem: str | None = None

    def load(self) -> None:
        """Read the file; anything malformed makes the whole cache empty (never fatal)."""
        try:
            with open(self.path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return
        except OSError as exc:
            self.problem = f"check-4 cache unreadable, ignored ({exc})"
            return
        header = _CACHE_MAGIC + b"\nkey " + self.key.encode() + b"\n"
        if not (data.startswith(header) and _CACHE_BODY.fullmatch(data, len(header))):
            self.problem = "check-4 cache was corrupt and has been ignored"
            return
        for line in data[len(header):].splitlines():
            if line.startswith(b"C "):
                self.commits.add(line[2:])
            else:
                self.lengths[line[2:42]] = int(line[43:])

    def save(self, commits: set[bytes], lengths: dict[bytes, int]) -> str | None:
        """Write atomically (tmp beside it + rename); return a note if that failed."""
        body = [_CACHE_MAGIC, b"key " + self.key.encode()]
        body += [b"C " + c for c in sorted(commits)]
        body += [b"L %s %d" % item for item in sorted(lengths.items())]
        try:  # a lost cache only costs a full walk: no fsync
            atomic_write(self.path, b"\n".join(body) + b"\n", durable=False, make_parents=True)
        except (OSError, GaspError) as exc:
            return f"could not write the check-4 cache ({exc})"
        return None


def walk_is_short(common_dir: str, objects_dir: str, head: bytes) -> bool:
    """True when a check-4 cache under `common_dir` holds commit `head` or every parent of
    it (a loose commit, as a new one is): the walk is at most one commit, too short to be
    worth a process of its own. A cheap guess from the files, never a verdict."""
    import zlib

    try:
        names = [n for n in os.listdir(os.path.join(common_dir, "gasp"))
                 if n.startswith("check4-") and n.endswith(".cache")]
    except OSError:
        return False
    parents: list[bytes] | None = None
    for name in names:
        try:
            with open(os.path.join(common_dir, "gasp", name), "rb") as f:
                data = f.read()
        except OSError:
            continue
        if b"\nC " + head + b"\n" in data:
            return True
        if parents is None:
            try:
                with open(os.path.join(objects_dir, head[:2].decode(), head[2:].decode()),
                          "rb") as f:
                    raw = zlib.decompressobj().decompress(f.read(8192), 4096)
            except (OSError, zlib.error, UnicodeError):
                return False
            if not raw.startswith(b"commit "):
                return False
            parents = [line[7:47] for line in raw.split(b"\n\n", 1)[0].split(b"\n")[1:]
                       if line.startswith(b"parent ") and is_hex(line[7:47], 40)]
        if parents and all(b"\nC " + p + b"\n" in data for p in parents):
            return True
    return False
