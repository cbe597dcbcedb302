"""Crafted git objects for hostile-input tests: raw tree bodies (duplicate, unsorted or
oddly named entries) written with ``git hash-object --literally``, commits made over
them with ``git commit-tree``, and loose objects whose header lies about their size."""

from __future__ import annotations

import hashlib
import struct
import subprocess
import zlib
from collections.abc import Callable
from pathlib import Path

TreeEntry = tuple[bytes, bytes, bytes]  # (mode text, name, raw 20-byte id)


def _git(repo: Path, *args: str, input: bytes | None = None) -> bytes:
    proc = subprocess.run(["git", *args], cwd=repo, input=input, capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return proc.stdout


def parse(body: bytes) -> list[TreeEntry]:
    """The entries of a tree body, in their order (duplicates kept)."""
    out, at = [], 0
    while at < len(body):
        space = body.index(b" ", at)
        nul = body.index(b"\0", space)
        out.append((body[at:space], body[space + 1:nul], body[nul + 1:nul + 21]))
        at = nul + 21
    return out


def body(entries: list[TreeEntry]) -> bytes:
    return b"".join(mode + b" " + name + b"\0" + sha for mode, name, sha in entries)


def read_tree(repo: Path, treeish: str) -> list[TreeEntry]:
    return parse(_git(repo, "cat-file", "tree", treeish))


def write_tree(repo: Path, entries: list[TreeEntry]) -> str:
    """Write a tree of exactly these entries (no checks: git hash-object --literally)."""
    return _git(repo, "hash-object", "-t", "tree", "--literally", "-w", "--stdin",
                input=body(entries)).decode().strip()


def write_blob(repo: Path, data: bytes) -> str:
    return _git(repo, "hash-object", "-w", "--stdin", input=data).decode().strip()


def edited_commit(repo: Path, parent: str, where: str,
                  edit: Callable[[list[TreeEntry]], list[TreeEntry]],
                  message: str = "crafted") -> str:
    """A commit on `parent` whose tree is the parent's with `edit` applied to the
    entries of directory `where` ("" for the top); the trees above it are rebuilt
    as they are, only the edited one's id changing. No ref is moved."""
    parts = [p for p in where.split("/") if p]

    def rebuild(treeish: str, depth: int) -> str:
        entries = read_tree(repo, treeish)
        if depth == len(parts):
            return write_tree(repo, edit(entries))
        name = parts[depth].encode()
        sub = rebuild(f"{parent}:{'/'.join(parts[:depth + 1])}", depth + 1)
        return write_tree(repo, [(m, n, bytes.fromhex(sub) if n == name else s)
                                 for m, n, s in entries])

    tree = rebuild(f"{parent}^{{tree}}", 0)
    return _git(repo, "commit-tree", "-p", parent, "-m", message, tree).decode().strip()


def duplicate_before(name: bytes, blob: str) -> Callable[[list[TreeEntry]], list[TreeEntry]]:
    """An edit putting a second entry `name` -> `blob` right before the existing one:
    git reads the first (`blob`), a reader keeping the last reads the old one."""
    def edit(entries: list[TreeEntry]) -> list[TreeEntry]:
        out: list[TreeEntry] = []
        for mode, n, sha in entries:
            if n == name:
                out.append((mode, n, bytes.fromhex(blob)))
            out.append((mode, n, sha))
        return out
    return edit


def write_loose(repo: Path, header: bytes, content: bytes, *, trailing: bytes = b"") -> str:
    """A loose object file holding `header` (e.g. ``b"blob 3"``) + NUL + `content`,
    filed under the id git would give what the header declares (so a lying header is
    found where the object is looked for); `trailing` bytes after the zlib stream."""
    kind, size = header.split(b" ")
    declared = content[:int(size)].ljust(int(size), b"\0")
    sha = hashlib.sha1(kind + b" " + size + b"\0" + declared).hexdigest()
    git_dir = Path(_git(repo, "rev-parse", "--git-common-dir").decode().strip())
    objects = (git_dir if git_dir.is_absolute() else repo / git_dir) / "objects"
    path = objects / sha[:2] / sha[2:]
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.chmod(0o644)
    path.write_bytes(zlib.compress(header + b"\0" + content) + trailing)
    return sha


def _pack_header(type_num: int, size: int) -> bytes:
    out = bytearray([(type_num << 4) | (size & 15)])
    size >>= 4
    while size:
        out[-1] |= 0x80
        out.append(size & 0x7F)
        size >>= 7
    return bytes(out)


def pack_entry(type_num: int, size: int, stream: bytes, base: bytes = b"") -> bytes:
    """A pack entry: its header declaring `size`, a REF_DELTA's raw `base` id, then
    `stream` (already zlib-compressed: it may inflate to anything)."""
    return _pack_header(type_num, size) + base + stream


def write_pack(repo: Path, entries: list[tuple[str, bytes]]) -> Path:
    """A pack of `entries` ((hex id the index files it under, raw entry bytes)) and its
    version-2 index, written by hand into the repository: nothing checks they agree."""
    data = bytearray(b"PACK" + struct.pack(">II", 2, len(entries)))
    rows = []
    for sha, raw in entries:
        rows.append((bytes.fromhex(sha), zlib.crc32(raw), len(data)))
        data += raw
    data += hashlib.sha1(data).digest()
    rows.sort()
    fanout = [sum(1 for r in rows if r[0][0] <= b) for b in range(256)]
    idx = bytearray(b"\377tOc" + struct.pack(">I", 2) + struct.pack(">256I", *fanout))
    idx += b"".join(r[0] for r in rows)
    idx += b"".join(struct.pack(">I", r[1]) for r in rows)
    idx += b"".join(struct.pack(">I", r[2]) for r in rows)
    idx += data[-20:]
    idx += hashlib.sha1(idx).digest()
    name = hashlib.sha1(bytes(data)).hexdigest()
    git_dir = Path(_git(repo, "rev-parse", "--git-common-dir").decode().strip())
    pack_dir = (git_dir if git_dir.is_absolute() else repo / git_dir) / "objects" / "pack"
    pack_dir.mkdir(parents=True, exist_ok=True)
    (pack_dir / f"pack-{name}.pack").write_bytes(bytes(data))
    (pack_dir / f"pack-{name}.idx").write_bytes(bytes(idx))
    return pack_dir / f"pack-{name}.pack"
