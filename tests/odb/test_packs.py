"""`odb.packs` reads every object as dulwich's store does, loose and from any number of
packs; `packcheck` refuses the pack indexes git refuses (and only those)."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from dulwich.repo import Repo

from git_gasp.odb.packcheck import refusal
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


@pytest.mark.parametrize("data", [b"", b"not an index at all" * 100,
                                  b"\377tOc\0\0\0\1" + b"\0" * 2000,
                                  b"\377tOc\0\0\0\2" + struct.pack(">256I", *([9] * 256))])
def test_what_is_not_a_whole_version_two_index_is_refused(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "pack-bad.idx"
    path.write_bytes(data)
    assert refusal(str(path))
    os.symlink(path, tmp_path / "pack-link.idx")
    assert "symbolic link" in refusal(str(tmp_path / "pack-link.idx"))


def test_a_whole_index_is_not_refused(tmp_path: Path) -> None:
    entries = [(bytes([i]) * 20, off) for i, off in ((1, 12), (0x80, 5 << 30), (0xFE, 99))]
    path = tmp_path / "pack-x.idx"
    path.write_bytes(_synthetic_index(entries))
    assert refusal(str(path)) is None


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


def test_a_version_one_index_git_reads_is_left_to_dulwich_not_refused(tmp_path: Path) -> None:
    ids = sorted(bytes([i]) * 20 for i in (3, 9))
    fanout = [sum(1 for sha in ids if sha[0] <= b) for b in range(256)]
    body = struct.pack(">256I", *fanout) + b"".join(struct.pack(">I", 12) + s for s in ids)
    path = tmp_path / "pack-v1.idx"
    path.write_bytes(body + b"\0" * 40)
    assert refusal(str(path)) is None
    path.write_bytes(body + b"\0" * 41)  # one byte too many: git refuses it
    assert "wrong index v1 file size" in refusal(str(path))


def test_a_pack_its_index_is_not_for_is_refused_as_git_refuses_it(tmp_path: Path) -> None:
    """Another pack under the index's name (git's ``open_packed_git_1``: the object
    count, then the checksum) is refused with git's reason, and its objects are named
    as in it rather than read."""
    _repo_with_history(tmp_path, commits=3)
    git(tmp_path, "repack", "-q", "-a", "-d")
    (idx,) = _idx_files(tmp_path)
    pack = idx.with_suffix(".pack")
    data = bytearray(pack.read_bytes())
    first = git(tmp_path, "rev-parse", "HEAD").strip().encode()
    pack.chmod(0o644)
    data[8:12] = struct.pack(">I", struct.unpack(">I", data[8:12])[0] + 1)
    pack.write_bytes(bytes(data))
    assert git(tmp_path, "cat-file", "-p", first.decode(), check=False) == ""
    files = PackFiles.for_objects_dir(str(tmp_path / ".git" / "objects"))
    try:
        assert files.packs == 0
        ((path, why),) = files.refused
        assert path == str(idx) and why.startswith("packfile claims to have"), why
        with pytest.raises(UnreadableObject, match="does not match its index"):
            files.read(first)
    finally:
        files.close()


def test_objects_read_loose_open_no_pack(tmp_path: Path) -> None:
    """Until an object is wanted from a pack, a loose one is read without opening the
    packs: dulwich's pack reader is not even imported (a re-check's new commit)."""
    _repo_with_history(tmp_path, commits=3)
    git(tmp_path, "repack", "-q", "-a", "-d")
    (tmp_path / "new.txt").write_text("new\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "loose")
    head = git(tmp_path, "rev-parse", "HEAD").strip()
    packed = git(tmp_path, "rev-parse", "HEAD~1").strip()
    script = ("import sys\nfrom git_gasp.odb.packs import PackFiles\n"
              f"f = PackFiles.for_objects_dir({str(tmp_path / '.git' / 'objects')!r})\n"
              f"print(f.packs, f.read(b'{head}')[0], 'dulwich.pack' in sys.modules)\n"
              f"print(f.read(b'{packed}')[0], 'dulwich.pack' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.stdout.split() == ["1", "1", "False", "1", "True"], proc.stderr
