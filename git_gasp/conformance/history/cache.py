"""The check-4 cache: commits already verified (and blob lengths at the last verified
tip), one file per (agent root, declared paths) under the common git dir; beside it
(``.tip``), the small objects the walk read at that tip (its commit, the trees down to
the append-only files, its manifest), so that a re-check after one commit compares it
with its parent without reading the packs (nor loading dulwich's pack reader).

A commit id pins its whole ancestry, so a later walk stops at a verified commit.
Anything malformed makes the whole cache empty; losing it only costs a full walk. A
tip object is kept only when its id is the hash of its content.
"""

from __future__ import annotations

import os
import zlib
from hashlib import sha256

from git_gasp.base.digest import is_hex
from git_gasp.base.errors import GaspError
from git_gasp.base.files import atomic_write, open_file, read_file
from git_gasp.odb.blobid import object_id

# 2: each commit's append-only paths from its own manifest (a moved log must extend the
# old one), and merges judged by meaning: caches made under the old rules are not trusted.
# 3: the key line carries the counts of both kinds of line and the body's crc32.
# 4: trees git fsck refuses (duplicate entries, ...) fail the commit (odb.fsck).
# 5: a committed .agent/lease or .agent/HEAD (local-only) fails the commit.
CHECKER_VERSION = 5
_CACHE_MAGIC = b"git-gasp check4 cache"
_NAME_LEAD = f"check4-v{CHECKER_VERSION}-"  # the version in the name: an old file is litter
_TIP_MAGIC = b"git-gasp check4 tip objects\n"
_TIP_MAX_BYTES = 1 << 20  # a larger tip file is not read (its objects are, from git)
_TIP_KEEP_BYTES = 64 << 10  # tip objects written, the newest tip's first (earlier ones
# serve a re-check after a reset: a commit on an earlier tip)
_TYPE_NAMES = {1: b"commit", 2: b"tree", 3: b"blob", 4: b"tag"}


def _cache_key(prefix: bytes, declared: frozenset[bytes]) -> str:
    material = b"\x00".join([b"%d" % CHECKER_VERSION, prefix, *sorted(declared)])
    return sha256(material).hexdigest()[:20]


class VerifiedCache:
    """Verified commit ids (+ blob lengths at the last verified tip), one file per key."""

    def __init__(self, common_dir: str, prefix: bytes, declared: frozenset[bytes]) -> None:
        self.key = _cache_key(prefix, declared)
        self.path = os.path.join(common_dir, "gasp", f"{_NAME_LEAD}{self.key}.cache")
        self.commits: set[bytes] = set()
        self.lengths: dict[bytes, int] = {}
        self.tip_objects: dict[bytes, tuple[int, bytes]] = {}
        self.problem: str | None = None

    def load(self) -> None:
        """Read the file; anything malformed makes the whole cache empty (never fatal)."""
        try:
            with open_file(self.path) as f:
                data = f.read()
        except FileNotFoundError:
            return
        except OSError as exc:
            self.problem = f"check-4 cache unreadable, ignored ({exc})"
            return
        parsed = _parse(data, _CACHE_MAGIC + b"\nkey " + self.key.encode() + b" ")
        if parsed is None:
            self.problem = "check-4 cache was corrupt and has been ignored"
            return
        self.commits, self.lengths = parsed
        self.tip_objects = _load_tip(self.path[:-len(".cache")] + ".tip")

    def save(self, commits: set[bytes], lengths: dict[bytes, int],
             tip_objects: dict[bytes, tuple[int, bytes]] | None = None) -> str | None:
        """Write atomically (tmp beside it + rename), and `tip_objects` (id -> (type
        number, content), the newest tip's first) beside it, within 64 KiB; return a
        note if that failed."""
        if tip_objects is not None:
            records, size = [], 0
            for sha, (kind, data) in tip_objects.items():
                size += len(data) + 50
                if size > _TIP_KEEP_BYTES and records:
                    break
                records.append(b"%s %d %d\n%s" % (sha, kind, len(data), data))
            tip = b"".join(records)
            try:
                atomic_write(self.path[:-len(".cache")] + ".tip", _TIP_MAGIC + tip,
                             durable=False, make_parents=True)
            except (OSError, GaspError) as exc:
                return f"could not write the check-4 cache ({exc})"
        lines = [b"C " + c for c in sorted(commits)]
        lines += [b"L %s %d" % item for item in sorted(lengths.items())]
        body = b"".join(line + b"\n" for line in lines)
        head = b"%s\nkey %s %d %d %08x\n" % (_CACHE_MAGIC, self.key.encode(), len(commits),
                                             len(lengths), zlib.crc32(body))
        try:  # a lost cache only costs a full walk: no fsync
            atomic_write(self.path, head + body, durable=False, make_parents=True)
        except (OSError, GaspError) as exc:
            return f"could not write the check-4 cache ({exc})"
        prune_stale(os.path.dirname(self.path))
        return None


def prune_stale(gasp_dir: str) -> None:
    """Remove the check-4 caches no current key can name: those written under another
    `CHECKER_VERSION` (their name carries it; names from before that carry none).
    Caches of other agent roots or declared paths under this version stay."""
    try:
        names = os.listdir(gasp_dir)
    except OSError:
        return
    for name in names:
        if name.startswith("check4-") and name.endswith((".cache", ".tip")) \
                and not name.startswith(_NAME_LEAD):
            try:
                os.unlink(os.path.join(gasp_dir, name))
            except OSError:
                pass  # another process pruned it, or it is not ours to remove


def _load_tip(path: str) -> dict[bytes, tuple[int, bytes]]:
    """The objects of a tip file, each one whose id hashes its content ({} for a file
    missing, too large or malformed)."""
    try:
        data = read_file(path, limit=_TIP_MAX_BYTES)
    except (OSError, GaspError):
        return {}
    if not data.startswith(_TIP_MAGIC):
        return {}
    found: dict[bytes, tuple[int, bytes]] = {}
    pos = len(_TIP_MAGIC)
    while pos < len(data):
        end = data.find(b"\n", pos, pos + 80)
        fields = data[pos:end].split(b" ") if end > 0 else []
        if len(fields) != 3 or not is_hex(fields[0], 40) or fields[1] not in (
                b"1", b"2", b"3", b"4") or not fields[2].isdigit():
            return {}
        kind, size = int(fields[1]), int(fields[2])
        body = data[end + 1:end + 1 + size]
        if len(body) != size or object_id(_TYPE_NAMES[kind], body) != fields[0]:
            return {}
        found[fields[0]] = kind, body
        pos = end + 1 + size
    return found


def _parse(data: bytes, lead: bytes) -> tuple[set[bytes], dict[bytes, int]] | None:
    """The commits and lengths of a cache file that starts with `lead` and whose body
    has the counts and crc32 its key line gives; None for anything else."""
    head, sep, body = data[len(lead):].partition(b"\n")
    fields = head.split(b" ")
    if not data.startswith(lead) or not sep or len(fields) != 3 \
            or not (fields[0].isdigit() and fields[1].isdigit() and is_hex(fields[2], 8)) \
            or int(fields[2], 16) != zlib.crc32(body) or not body.endswith(b"\n"):
        return None
    n_commits, n_lengths = int(fields[0]), int(fields[1])
    lines = body.split(b"\n")
    if len(lines) != n_commits + n_lengths + 1:
        return None
    commits = {line[2:] for line in lines[:n_commits]}
    try:
        lengths = {line[2:42]: int(line[43:]) for line in lines[n_commits:-1]}
    except ValueError:
        return None
    if len(commits) != n_commits or len(lengths) != n_lengths:
        return None
    return commits, lengths


def walk_is_short(common_dir: str, objects_dir: str, head: bytes) -> bool:
    """True when a check-4 cache under `common_dir` holds commit `head` or every parent of
    it (a loose commit, as a new one is): the walk is at most one commit, too short to be
    worth a process of its own. A cheap guess from the files, never a verdict."""
    try:
        names = [n for n in os.listdir(os.path.join(common_dir, "gasp"))
                 if n.startswith("check4-") and n.endswith(".cache")]
    except OSError:
        return False
    parents: list[bytes] | None = None
    for name in names:
        try:
            with open_file(os.path.join(common_dir, "gasp", name)) as f:
                data = f.read()
        except OSError:
            continue
        if b"\nC " + head + b"\n" in data:
            return True
        if parents is None:
            try:
                with open_file(os.path.join(objects_dir, head[:2].decode(),
                                            head[2:].decode())) as f:
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
