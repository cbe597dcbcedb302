"""The raw pack index and loose-object reader agree with dulwich (and git) on every
object, and refuse what is not an index or does not read cleanly."""

from __future__ import annotations

import binascii
import os
import struct
import zlib
from pathlib import Path

import pytest
from dulwich.repo import Repo

from git_gasp.odb.pack_index import PackIndex, PackIndexError, PackIndexRefused
from git_gasp.odb.packs import PackFiles, UnreadableObject
from tests.testing.run import git


def _repo_with_history(root: Path, commits: int = 30) -> None:
    git(root, "init", "-q", "-b", "main")
    for i in range(commits):
        (root / "a.txt").write_text("".join(f"line {j}\n" for j in range(i * 10)))
        (root / f"f{i % 7}.txt").write_text(f"file {i}\n" * (i + 1))
        git(root, "add", ".")
        git(root, "commit", "-q", "-m", f"c{i}")


def _idx_files(root: Path) -> list[Path]:
    return sorted((root / ".git" / "objects" / "pack").glob("pack-*.idx"))


def test_offsets_match_dulwich_for_every_object_and_missing_ids_are_key_errors(
        tmp_path: Path) -> None:
    _repo_with_history(tmp_path)
    git(tmp_path, "gc", "-q", "--aggressive")
    (idx_path,) = _idx_files(tmp_path)
    with Repo(str(tmp_path)) as repo:
        (pack,) = list(repo.object_store.packs)
        theirs = {sha: pack.index.object_offset(sha) for sha in pack.index}
    ours = PackIndex(str(idx_path))
    try:
        assert len(ours) == len(theirs) > 90
        # one lookup at a time (binary search), then past the threshold (the whole map)
        for round_ in range(2):
            for sha, offset in theirs.items():
                assert ours.object_offset(sha) == offset, (round_, sha)
        for missing in (b"0" * 40, b"f" * 40, next(iter(theirs))[:39] + b"x", b"zz"):
            with pytest.raises(KeyError):
                ours.object_offset(missing)
    finally:
        ours.close()


def _synthetic_index(entries: list[tuple[bytes, int]]) -> bytes:
    """A version-2 index of (20-byte id, offset) entries, large offsets in their table."""
    entries = sorted(entries)
    fanout = [sum(1 for sha, _ in entries if sha[0] <= b) for b in range(256)]
    small, large = [], []
    for _sha, off in entries:
        if off >= 1 << 31:
            small.append(0x80000000 | len(large))
            large.append(off)
        else:
            small.append(off)
    body = (b"\377tOc" + struct.pack(">I", 2) + struct.pack(">256I", *fanout)
            + b"".join(sha for sha, _ in entries) + b"\0\0\0\0" * len(entries)
            + struct.pack(f">{len(small)}I", *small) + struct.pack(f">{len(large)}Q", *large))
    return body + b"\0" * 40


def test_offsets_past_two_gibibytes_come_from_the_large_table(tmp_path: Path) -> None:
    entries = [(bytes([i]) * 20, off) for i, off in
               ((1, 12), (0x80, 5 << 30), (0x81, (1 << 31) + 7), (0xFE, 99))]
    path = tmp_path / "pack-x.idx"
    path.write_bytes(_synthetic_index(entries))
    index = PackIndex(str(path))
    try:
        for sha, off in entries:
            assert index.object_offset(binascii.hexlify(sha)) == off
        assert index._id_map() == {binascii.hexlify(s): o for s, o in entries}
    finally:
        index.close()


@pytest.mark.parametrize("data", [b"", b"not an index at all" * 100,
                                  b"\377tOc\0\0\0\1" + b"\0" * 2000,
                                  b"\377tOc\0\0\0\2" + struct.pack(">256I", *([9] * 256))])
def test_what_is_not_a_whole_version_two_index_is_refused(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "pack-bad.idx"
    path.write_bytes(data)
    with pytest.raises(PackIndexError):
        PackIndex(str(path))


def test_loose_objects_read_as_dulwich_reads_them(tmp_path: Path) -> None:
    _repo_with_history(tmp_path, commits=5)
    objects = tmp_path / ".git" / "objects"
    files = PackFiles.for_objects_dir(str(objects))
    try:
        with Repo(str(tmp_path)) as repo:
            shas = list(repo.object_store)
            assert len(shas) > 10
            for sha in shas:
                obj = repo.object_store[sha]
                got = files.read(sha)
                assert got == (obj.type_num, obj.as_raw_string()), sha
        # a cut-short or corrupt loose object is refused, naming it
        sha = shas[0]
        path = Path(files.loose_path(sha))
        raw = zlib.decompress(path.read_bytes())
        os.chmod(path, 0o644)
        path.write_bytes(zlib.compress(raw)[:-6])
        files._where.clear()
        with pytest.raises(UnreadableObject, match=sha.decode()):
            files.read(sha)
        path.write_bytes(zlib.compress(b"blob 99\0short"))
        with pytest.raises(UnreadableObject, match=sha.decode()):
            files.read(sha)
        path.write_bytes(zlib.compress(b"blob 5\0hello"))
        assert files.read(sha) == (3, b"hello")
        assert files.read(b"0" * 40) is None  # not here at all
    finally:
        files.close()


def test_packs_in_the_objects_dir_are_all_mapped_and_searched(tmp_path: Path) -> None:
    _repo_with_history(tmp_path, commits=4)
    git(tmp_path, "repack", "-q", "-d")
    _repo_with_history_more = 3
    for i in range(_repo_with_history_more):
        (tmp_path / "b.txt").write_text(f"b {i}\n")
        git(tmp_path, "add", ".")
        git(tmp_path, "commit", "-q", "-m", f"b{i}")
    git(tmp_path, "repack", "-q")  # a second pack beside the first
    assert len(_idx_files(tmp_path)) == 2
    files = PackFiles.for_objects_dir(str(tmp_path / ".git" / "objects"))
    try:
        assert files.packs == 2
        with Repo(str(tmp_path)) as repo:
            for sha in repo.object_store:
                obj = repo.object_store[sha]
                assert files.read(sha) == (obj.type_num, obj.as_raw_string())
    finally:
        files.close()


def test_a_pack_of_any_name_with_its_index_is_read(tmp_path: Path) -> None:
    """`git maintenance` writes ``loose-<hash>.pack``: git and dulwich read any pack that
    has its index, and so do we."""
    _repo_with_history(tmp_path, commits=3)
    git(tmp_path, "repack", "-q", "-a", "-d")
    (idx,) = _idx_files(tmp_path)
    for suffix in (".idx", ".pack"):
        src = idx.with_suffix(suffix)
        src.rename(src.with_name("loose-x" + suffix))
    files = PackFiles.for_objects_dir(str(tmp_path / ".git" / "objects"))
    try:
        assert files.packs == 1
        with Repo(str(tmp_path)) as repo:
            for sha in repo.object_store:
                assert files.read(sha) is not None
    finally:
        files.close()


def test_offsets_outside_their_table_or_the_pack_are_refused_naming_the_index(
        tmp_path: Path) -> None:
    """As git's nth_packed_object_offset and use_pack: a large-table index past the table,
    an offset past the pack, each refused when read (the rest of the index still reads)."""
    entries = [(bytes([1]) * 20, 12), (bytes([2]) * 20, 5000), (bytes([3]) * 20, 5 << 30)]
    data = bytearray(_synthetic_index(entries))
    at = 8 + 256 * 4 + 3 * 24 + 8  # the third entry's 4-byte offset
    data[at:at + 4] = (0x80000000 | 7).to_bytes(4, "big")  # the table has one entry
    path = tmp_path / "pack-x.idx"
    path.write_bytes(bytes(data))
    index = PackIndex(str(path))
    try:
        index.pack_size = 1000
        assert index.object_offset(b"01" * 20) == 12
        with pytest.raises(PackIndexRefused, match="offset 5000 beyond end of packfile"):
            index.object_offset(b"02" * 20)
        with pytest.raises(PackIndexRefused, match=f"{path}: offset of entry 2 beyond end "
                           "of pack index"):
            index.object_offset(b"03" * 20)
    finally:
        index.close()


def test_a_version_one_index_git_reads_is_left_to_dulwich_not_refused(tmp_path: Path) -> None:
    ids = sorted(bytes([i]) * 20 for i in (3, 9))
    fanout = [sum(1 for sha in ids if sha[0] <= b) for b in range(256)]
    body = struct.pack(">256I", *fanout) + b"".join(struct.pack(">I", 12) + s for s in ids)
    path = tmp_path / "pack-v1.idx"
    path.write_bytes(body + b"\0" * 40)
    with pytest.raises(PackIndexError) as caught:
        PackIndex(str(path))
    assert not isinstance(caught.value, PackIndexRefused)
    path.write_bytes(body + b"\0" * 41)  # one byte too many: git refuses it
    with pytest.raises(PackIndexRefused, match="wrong index v1 file size"):
        PackIndex(str(path))
