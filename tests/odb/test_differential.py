"""odb against git on hostile objects: trees with duplicate, unsorted or oddly named
entries, loose objects whose header lies about their size, zlib bombs, cut-short packs
and pack indexes with lying offsets. Each is put alone in a repository and read by git
(``git fsck --strict``, ``git cat-file --batch``, ``git ls-tree``) and by odb (through dulwich,
with and without `odb.packs`): where git refuses, odb must refuse (ObjectError);
where git reads, odb must refuse or read the same. Peak memory on a zlib bomb stays
within a few MiB of a plain run (memory is asserted, never time)."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from dulwich.object_store import DiskObjectStore

from git_gasp.odb.objects import ObjectError, Objects
from git_gasp.odb.packs import PackFiles
from tests.testing.trees import TreeEntry, pack_entry, write_loose, write_pack, write_tree

BLOB = hashlib.sha1(b"blob 6\0hello\n").digest()  # written into each repository
TREE_MODE = b"40000"


def _repo(tmp_path: Path, name: str) -> Path:
    repo = tmp_path / name
    subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
    sha = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo,
                         input=b"hello\n", capture_output=True, check=True).stdout.strip()
    assert bytes.fromhex(sha.decode()) == BLOB
    return repo


def _git(repo: Path, *args: str, input: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=repo, input=input, capture_output=True)


def _fsck_refuses(repo: Path) -> bool:
    return _git(repo, "fsck", "--strict", "--no-dangling").returncode != 0


def _git_object(repo: Path, sha: str) -> tuple[bytes, bytes] | None:
    """(type, content) as ``git cat-file --batch`` reads it, None if it refuses."""
    proc = _git(repo, "cat-file", "--batch", input=sha.encode() + b"\n")
    head, _, rest = proc.stdout.partition(b"\n")
    fields = head.split()
    if proc.returncode != 0 or len(fields) != 3 or fields[1] == b"missing":
        return None
    size = int(fields[2])
    if len(rest) != size + 1:
        return None  # it printed other than it declared: no reading to match
    return fields[1], rest[:size]


def _packed(repo: Path) -> Objects:
    objects = Objects(DiskObjectStore(str(repo / "objects")))
    objects.packed = PackFiles.for_objects_dir(str(repo / "objects"))
    return objects


def _dulwich(repo: Path) -> Objects:
    return Objects(DiskObjectStore(str(repo / "objects")))


def _git_tree(repo: Path, sha: str) -> dict[bytes, tuple[int, bytes]]:
    """name -> (mode, hex id) as git resolves a name: the first entry of it."""
    proc = _git(repo, "ls-tree", "-z", sha)
    assert proc.returncode == 0, proc.stderr
    found: dict[bytes, tuple[int, bytes]] = {}
    for record in proc.stdout.split(b"\0"):
        if record:
            meta, _, name = record.partition(b"\t")
            mode, _kind, hexsha = meta.split(b" ")
            found.setdefault(name, (int(mode, 8), hexsha))
    return found


def _entry(name: bytes, mode: bytes = b"100644", sha: bytes = BLOB) -> TreeEntry:
    return mode, name, sha


TREES = {
    "plain": [_entry(b"a"), _entry(b"b")],
    "duplicate": [_entry(b"events.jsonl"), _entry(b"events.jsonl", sha=b"\1" * 20)],
    "duplicate apart": [_entry(b"a"), _entry(b"a-b"), _entry(b"a", TREE_MODE)],
    "unsorted": [_entry(b"b"), _entry(b"a")],
    "unsorted dir": [_entry(b"a", TREE_MODE), _entry(b"a-b")],
    "slash": [_entry(b"state/events.jsonl")],
    "empty name": [_entry(b"")],
    "dot": [_entry(b".")],
    "dotdot": [_entry(b"..")],
    ".git": [_entry(b".git", TREE_MODE)],
    ".GIT": [_entry(b".GIT")],
    ".git. ntfs": [_entry(b".git. ")],
    "git~1": [_entry(b"git~1")],
    "hfs .git": [_entry(".g\u200cit".encode())],
    "bad mode": [_entry(b"a", b"100600")],
    "zero-padded mode": [_entry(b"a", b"0100644")],
    "malformed mode": [_entry(b"a", b"10x644")],
}




@pytest.fixture(scope="module")
def tree_repos(tmp_path_factory) -> dict[str, tuple[Path, str]]:
    root = tmp_path_factory.mktemp("trees")
    out = {}
    for i, (name, entries) in enumerate(TREES.items()):
        repo = _repo(root, f"r{i}")
        out[name] = repo, write_tree(repo, entries)
    return out


@pytest.mark.parametrize("reader", [_packed, _dulwich])
@pytest.mark.parametrize("case", sorted(TREES))
def test_trees_read_as_git_reads_them_or_are_refused(tree_repos, case, reader):
    repo, sha = tree_repos[case]
    refused = _fsck_refuses(repo)
    objects = reader(repo)
    try:
        got = objects.tree(sha.encode())
    except ObjectError as exc:
        assert "git fsck" in str(exc) or "refused" in str(exc) or "unreadable" in str(exc)
        return
    assert not refused, f"git fsck --strict refuses {case!r}, odb read {got}"
    assert {n: (e.mode, e.sha) for n, e in got.items()} == _git_tree(repo, sha)


LOOSE = {  # header, content, bytes after the zlib stream
    "honest": (b"blob 5", b"hello", b""),
    "longer than declared": (b"blob 5", b"hello world", b""),
    "shorter than declared": (b"blob 20", b"hello", b""),
    "zero-padded size": (b"blob 05", b"hello", b""),
    "unknown type": (b"blob2 5", b"hello", b""),
    "bomb": (b"blob 10", b"\0" * (16 << 20), b""),
}


@pytest.mark.parametrize("case", list(LOOSE.values()), ids=list(LOOSE))
def test_loose_objects_read_as_git_reads_them_or_are_refused(tmp_path, case):
    header, content, trailing = case
    repo = _repo(tmp_path, "r")
    sha = write_loose(repo, header, content, trailing=trailing)
    refused = _fsck_refuses(repo)
    git_read = _git_object(repo, sha)
    try:
        got = _packed(repo).blob(sha.encode())
    except ObjectError as exc:
        assert sha in str(exc), exc
        return
    assert not refused and git_read == (b"blob", got), (case, git_read, got[:40])


def test_loose_object_with_garbage_after_its_stream_reads_as_cat_file_reads_it(tmp_path):
    """Bytes after a loose object's zlib stream: git fsck calls the file corrupt, git's
    readers (cat-file, show, log) read the object, whose id is its content's hash; odb
    reads it as they do (odb.loose), its content and nothing of the trailing bytes."""
    repo = _repo(tmp_path, "r")
    sha = write_loose(repo, b"blob 5", b"hello", trailing=b"garbage")
    fsck = _git(repo, "fsck", "--strict", "--no-dangling")
    assert fsck.returncode != 0 and b"garbage at end of loose object" in fsck.stderr
    assert _git_object(repo, sha) == (b"blob", b"hello")
    assert _packed(repo).blob(sha.encode()) == b"hello"
    assert _dulwich(repo).blob(sha.encode()) == b"hello"


def _packed_repo(tmp_path: Path) -> tuple[Path, list[str]]:
    repo = _repo(tmp_path, "p")
    shas = [_git(repo, "hash-object", "-w", "--stdin", input=b"%d\n" % i * 400)
            .stdout.decode().strip() for i in range(8)]
    listed = "".join(s + "\n" for s in shas).encode()
    assert _git(repo, "pack-objects", "-q", "--depth=4", "objects/pack/pack",
                input=listed).returncode == 0
    assert _git(repo, "prune-packed").returncode == 0
    return repo, shas


def _pack(repo: Path, ext: str) -> Path:
    return next((repo / "objects" / "pack").glob(f"*.{ext}"))


def _check_all(repo: Path, shas: list[str]) -> int:
    """Every object read by odb matches git's reading; the number odb refused."""
    refused = _fsck_refuses(repo)
    objects = _packed(repo)
    refusals = 0
    for sha in shas:
        git_read = _git_object(repo, sha)
        try:
            got = objects.blob(sha.encode())
        except ObjectError:
            refusals += 1
            continue
        assert git_read == (b"blob", got) and (not refused or git_read is not None), sha
    return refusals


def test_a_cut_short_pack_reads_as_git_reads_it_or_is_refused(tmp_path):
    repo, shas = _packed_repo(tmp_path)
    assert _check_all(repo, shas) == 0
    pack = _pack(repo, "pack")
    pack.chmod(0o644)
    pack.write_bytes(pack.read_bytes()[:pack.stat().st_size // 2])
    assert _check_all(repo, shas) > 0


def test_lying_pack_index_offsets_read_as_git_reads_them_or_are_refused(tmp_path):
    repo, shas = _packed_repo(tmp_path)
    idx = _pack(repo, "idx")
    data = bytearray(idx.read_bytes())
    count = int.from_bytes(data[8 + 255 * 4:8 + 256 * 4], "big")
    offsets = 8 + 256 * 4 + count * 24
    for i in range(count):  # every entry one byte into its own entry: not a header
        at = offsets + 4 * i
        data[at:at + 4] = (int.from_bytes(data[at:at + 4], "big") + 1).to_bytes(4, "big")
    idx.chmod(0o644)
    idx.write_bytes(bytes(data))
    _check_all(repo, shas)
    for i in range(count):  # past the end of the pack
        data[offsets + 4 * i:offsets + 4 * i + 4] = (1 << 30).to_bytes(4, "big")
    idx.write_bytes(bytes(data))
    _check_all(repo, shas)


def _delta(base_size: int, target_size: int, *ops: bytes) -> bytes:
    def varint(n: int) -> bytes:
        out = bytearray()
        while True:
            out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
            n >>= 7
            if not n:
                return bytes(out)
    return varint(base_size) + varint(target_size) + b"".join(ops)


def _copy(offset: int, length: int) -> bytes:
    return bytes([0x80 | 0x01 | 0x10, offset, length])


def _bad_id(label: str) -> str:
    return hashlib.sha1(label.encode()).hexdigest()


def _ref_delta(label: str, base: bytes, delta: bytes) -> tuple[str, bytes]:
    return _bad_id(label), pack_entry(7, len(delta), zlib.compress(delta), base)


PACK_CASES = {  # hex id -> why it is hostile
    "copy past its base": _delta(6, 10, _copy(0, 10)),
    "wrong base size": _delta(99, 6, _copy(0, 6)),
    "builds more than declared": _delta(6, 3, _copy(0, 6)),
    "builds less than declared": _delta(6, 9, _copy(0, 6)),
    "insert past its end": _delta(6, 9, bytes([9]) + b"abc"),
}


def test_hostile_pack_entries_read_as_git_reads_them_or_are_refused(tmp_path):
    repo = _repo(tmp_path, "r")
    hello = zlib.compress(b"hello\n")
    entries = [(BLOB.hex(), pack_entry(3, 6, hello))]  # the honest base
    entries += [_ref_delta(label, BLOB, delta) for label, delta in PACK_CASES.items()]
    a, b = _bad_id("cycle a"), _bad_id("cycle b")
    cycle = _delta(6, 6, _copy(0, 6))
    entries += [(a, pack_entry(7, len(cycle), zlib.compress(cycle), bytes.fromhex(b))),
                (b, pack_entry(7, len(cycle), zlib.compress(cycle), bytes.fromhex(a)))]
    entries += [(_bad_id("longer"), pack_entry(3, 3, hello)),
                (_bad_id("shorter"), pack_entry(3, 9, hello)),
                (_bad_id("bomb"), pack_entry(3, 10, zlib.compress(b"\0" * (8 << 20))))]
    write_pack(repo, entries)
    objects = _packed(repo)
    assert objects.blob(BLOB.hex().encode()) == b"hello\n"
    for sha in (a, b):  # git 2.39 loops forever on these: no reading to compare with
        with pytest.raises(ObjectError, match="delta chain is cyclic"):
            objects.blob(sha.encode())
    for sha, _raw in entries[1:]:
        if sha in (a, b):
            continue
        git_read = _git_object(repo, sha)
        try:
            got = objects.blob(sha.encode())
        except ObjectError as exc:
            assert sha in str(exc), exc
            continue
        assert git_read == (b"blob", got), (sha, git_read, got[:40])


BOMB_SCRIPT = """
import resource, sys
from dulwich.object_store import DiskObjectStore
from git_gasp.odb.objects import ObjectError, Objects
from git_gasp.odb.packs import PackFiles
objects = Objects(DiskObjectStore(sys.argv[1]))
objects.packed = PackFiles.for_objects_dir(sys.argv[1])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    objects.blob(sys.argv[2].encode())
    print("read")
except ObjectError:
    print("refused")
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
"""


@pytest.mark.slow  # over half a second: out of the fast loop
@pytest.mark.parametrize("where", ["loose", "packed"])
def test_a_zlib_bomb_is_refused_in_bounded_memory(tmp_path, where):
    repo = _repo(tmp_path, "r")
    z = zlib.compressobj(9)
    chunk = b"\0" * (1 << 20)
    head = b"blob 10\0" if where == "loose" else b""
    stream = z.compress(head) + b"".join(z.compress(chunk) for _ in range(128))
    stream += z.flush()  # 128 MiB of zeros in well under 1 MiB
    sha = hashlib.sha1(b"blob 10\0" + b"\0" * 10).hexdigest()
    if where == "loose":
        path = repo / "objects" / sha[:2] / sha[2:]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(stream)
    else:
        write_pack(repo, [(sha, pack_entry(3, 10, stream))])
    assert _git_object(repo, sha) is None or _fsck_refuses(repo)
    proc = subprocess.run([sys.executable, "-c", BOMB_SCRIPT, str(repo / "objects"), sha],
                          capture_output=True, check=True)
    verdict, grown = proc.stdout.decode().split()
    assert verdict == "refused"
    assert int(grown) < 32 << 10, f"peak RSS grew by {grown} KiB reading a 128 MiB bomb"
