"""Write every version of an append-only file as one git pack shaped as `git gc` packs it.

``git gc --aggressive`` of 2,000 versions of a file growing to 100 MB does not finish
here (measured > 55 min: each delta attempt compares tens of MB, window 250). Its
result is known, though: the NEWEST version is stored whole and every older one as a
backward OFS_DELTA of a newer version, whose instructions copy the older version's
bytes, a prefix of its base. `write_versions` writes that shape directly:

- objects in recency order: the newest version first (a full blob), then the older
  ones, newest to oldest;
- of the older ones, every 50th (counting back from the newest: the 1st, 51st, 101st,
  ...) deltas against the newest, and each of the others against the version just
  newer than itself, so a delta chain is at most 50 deep (git's default --depth);
- a delta is copy instructions of its base's first bytes, each copy at most 0xFFFFFF
  bytes (the delta format's 24-bit size), so a 50 MB version takes three;
- versions under 50 bytes are full blobs (git never deltas those).

`git index-pack` then writes the .idx, rebuilding and hashing every version (a
verification); or, with ``index="self"``, the writer hashes each version itself
(hashlib's sha1, several times faster than git's collision-detecting one: the sum of
2,000 versions of a 110 MB log is ~110 GB) and writes the .idx with dulwich. No
version is built in memory: each is a prefix of the final content.
"""

from __future__ import annotations

import hashlib
import subprocess
import zlib
from pathlib import Path

BLOB, OFS_DELTA = 3, 6
DEPTH = 50
MAX_COPY = 0xFFFFFF
_SMALL = 50


def _obj_header(kind: int, size: int) -> bytes:
    out = bytearray()
    byte = (kind << 4) | (size & 0x0F)
    size >>= 4
    while size:
        out.append(byte | 0x80)
        byte = size & 0x7F
        size >>= 7
    out.append(byte)
    return bytes(out)


def _ofs(distance: int) -> bytes:
    """The OFS_DELTA base distance, in git's offset encoding."""
    out = [distance & 0x7F]
    distance >>= 7
    while distance:
        distance -= 1
        out.append(0x80 | (distance & 0x7F))
        distance >>= 7
    return bytes(reversed(out))


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def prefix_delta(base_size: int, size: int) -> bytes:
    """A delta turning a `base_size`-byte base into its first `size` bytes."""
    out = bytearray(_varint(base_size) + _varint(size))
    pos = 0
    while pos < size:
        n = min(MAX_COPY, size - pos)
        op, args = 0x80, bytearray()
        for i in range(4):
            if (pos >> (8 * i)) & 0xFF:
                op |= 1 << i
                args.append((pos >> (8 * i)) & 0xFF)
        for i in range(3):
            if (n >> (8 * i)) & 0xFF:
                op |= 0x10 << i
                args.append((n >> (8 * i)) & 0xFF)
        out.append(op)
        out += args
        pos += n
    return bytes(out)


def bases(lengths: list[int]) -> list[int | None]:
    """Per version (oldest first), the version its delta is against (None: stored whole)."""
    tip = len(lengths) - 1
    out: list[int | None] = []
    for v, n in enumerate(lengths):
        back = tip - v
        if back == 0 or n < _SMALL:
            out.append(None)
        elif back % DEPTH == 1:
            out.append(tip)
        else:
            out.append(v + 1)
    return out


class _Writer:
    def __init__(self, path: Path, count: int) -> None:
        self.f = open(path, "wb")
        self.sha = hashlib.sha1()
        self.offset = 0
        self.crc = 0
        self.write(b"PACK" + (2).to_bytes(4, "big") + count.to_bytes(4, "big"))

    def write(self, data: bytes | memoryview) -> None:
        self.f.write(data)
        self.sha.update(data)
        self.crc = zlib.crc32(data, self.crc)
        self.offset += len(data)

    def close(self) -> bytes:
        digest = self.sha.digest()
        self.f.write(digest)
        self.f.close()
        return digest


def write_versions(pack_dir: Path, content: bytes, lengths: list[int],
                   index: str = "git") -> list[str]:
    """Pack the versions ``content[:n] for n in lengths`` (oldest first, each a prefix of
    the next, all distinct) into `pack_dir`; return their blob ids (hex), in order.
    `index`: "git" (`git index-pack` writes the .idx) or "self" (hashed here)."""
    if (any(lengths[i + 1] <= lengths[i] for i in range(len(lengths) - 1))
            or lengths[-1] != len(content)):
        raise ValueError("versions must grow strictly and end with the content")
    base_of = bases(lengths)
    tmp = pack_dir / "tmp_logpack.pack"
    w = _Writer(tmp, len(lengths))
    where: dict[int, int] = {}
    view = memoryview(content)
    crcs: dict[int, int] = {}
    for v in range(len(lengths) - 1, -1, -1):
        n, base = lengths[v], base_of[v]
        where[v] = w.offset
        w.crc = 0
        if base is None:
            w.write(_obj_header(BLOB, n))
            zc = zlib.compressobj()
            for pos in range(0, n, 1 << 24):
                w.write(zc.compress(view[pos:min(n, pos + (1 << 24))]))
            w.write(zc.flush())
        else:
            delta = prefix_delta(lengths[base], n)
            w.write(_obj_header(OFS_DELTA, len(delta)) + _ofs(where[v] - where[base]))
            w.write(zlib.compress(delta))
        crcs[v] = w.crc
    checksum = w.close()
    name = "pack-" + checksum.hex()
    idx = pack_dir / "tmp_logpack.idx"
    if index == "self":
        from dulwich.pack import write_pack_index_v2

        ids = []
        for v, n in enumerate(lengths):
            digest = hashlib.sha1(b"blob %d\x00" % n)
            digest.update(view[:n])
            ids.append((digest.hexdigest(), where[v]))
        entries = sorted((bytes.fromhex(h), off, crcs[v]) for v, (h, off) in enumerate(ids))
        with open(idx, "wb") as f:
            write_pack_index_v2(f, entries, checksum)
    else:
        subprocess.run(["git", "index-pack", "-o", str(idx), str(tmp)], check=True,
                       capture_output=True)
        ids = _read_idx(idx)
    tmp.rename(pack_dir / f"{name}.pack")
    idx.rename(pack_dir / f"{name}.idx")
    by_offset = {off: sha for sha, off in ids}
    return [by_offset[where[v]] for v in range(len(lengths))]


def _read_idx(idx: Path) -> list[tuple[str, int]]:
    """(blob id hex, pack offset) of every object in a version-2 .idx (packs < 2 GiB)."""
    data = idx.read_bytes()
    if data[:4] != b"\xfftOc" or int.from_bytes(data[4:8], "big") != 2:
        raise ValueError(f"{idx}: not a version-2 pack index")
    count = int.from_bytes(data[8 + 255 * 4:8 + 256 * 4], "big")
    names = 8 + 256 * 4
    offsets = names + count * 24  # after the names (20 B each) and the CRCs (4 B each)
    return [(data[names + 20 * i:names + 20 * i + 20].hex(),
             int.from_bytes(data[offsets + 4 * i:offsets + 4 * i + 4], "big"))
            for i in range(count)]
