"""The short cuts check 4's object reading takes read what dulwich reads: plain commits
by a strict pattern, objects located by the pack index's offsets, and git's run of
64 KiB prefix copies in a delta."""

from __future__ import annotations

import binascii

import pytest
from dulwich.objects import Commit
from dulwich.repo import Repo

from git_gasp.odb.deltas import PackFormatError, _copy_run, parse_delta
from git_gasp.odb.objects import plain_commit
from git_gasp.odb.packs import PackFiles
from tests.testing.run import git

TREE = b"4b825dc642cb6eb9a060e54bf8d69288fbee4904"
P1 = b"1" * 40
P2 = b"2" * 40
WHO = b"A U Thor <a@example.com> 1767225600 +0100\n"

COMMITS = [
    b"tree " + TREE + b"\nauthor " + WHO + b"committer " + WHO + b"\nroot\n",
    b"tree " + TREE + b"\nparent " + P1 + b"\nauthor " + WHO + b"committer " + WHO + b"\nm\n",
    b"tree " + TREE + b"\nparent " + P1 + b"\nparent " + P2 + b"\nauthor " + WHO
    + b"committer " + WHO + b"\n",
    b"tree " + TREE + b"\nparent " + P1 + b"\nauthor A <a> b> 1 -0000\ncommitter " + WHO
    + b"\n\n\nodd message\n",
    # Not plain (dulwich reads them, the pattern leaves them to it):
    b"tree " + TREE + b"\nparent " + P1 + b"\nauthor " + WHO + b"committer " + WHO
    + b"gpgsig -----BEGIN PGP SIGNATURE-----\n x\n -----END PGP SIGNATURE-----\n\nsigned\n",
    b"tree " + TREE + b"\nauthor " + WHO + b"committer " + WHO + b"encoding latin-1\n\nm\n",
    b"tree " + TREE.upper() + b"\nauthor " + WHO + b"committer " + WHO + b"\nm\n",
    b"tree " + TREE + b"\nauthor " + WHO + b"parent " + P1 + b"\ncommitter " + WHO + b"\nm\n",
    b"tree " + TREE + b"\nauthor A <a> 1 +0100\ncommitter A <a> x +0100\n\nm\n",
    b"tree " + TREE + b"\nauthor " + WHO + b"committer " + WHO,  # no blank line
    b"parent " + P1 + b"\ntree " + TREE + b"\nauthor " + WHO + b"committer " + WHO + b"\n",
]


@pytest.mark.parametrize("raw", COMMITS)
def test_a_plain_commit_reads_as_dulwich_reads_it(raw):
    plain = plain_commit(raw)
    if plain is None:
        return  # dulwich reads (or rejects) it
    commit = Commit.from_string(raw)
    assert (plain.tree, list(plain.parents)) == (commit.tree, commit.parents)


def test_the_plain_pattern_takes_the_usual_commits():
    assert sum(plain_commit(raw) is not None for raw in COMMITS) == 4


def test_the_pack_id_map_locates_every_object(tmp_path):
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for n in range(30):
        (repo / "f").write_bytes(b"line %d\n" % n * (n + 1))
        git(repo, "add", "f")
        git(repo, "commit", "-q", "-m", f"c{n}")
    git(repo, "gc", "-q")
    with Repo(str(repo)) as dul:
        files = PackFiles.for_store(dul.object_store)
        assert files is not None and files.packs == 1
        [pack] = dul.object_store.packs
        count = 0
        for raw, offset, _crc in pack.index.iterentries():
            assert files.locate(binascii.hexlify(raw)) == (0, offset)
            count += 1
        assert count > 60
        assert files.locate(b"0" * 40) is None
        files.close()


def _varint(n: int) -> bytes:
    out = b""
    while True:
        byte, n = n & 0x7F, n >> 7
        if not n:
            return out + bytes([byte])
        out += bytes([byte | 0x80])


@pytest.mark.parametrize("copies", [1, 2, 255, 256, 257, 600])
def test_a_run_of_64k_prefix_copies_parses_as_one_prefix(copies):
    run, at = _copy_run(copies)
    ops = run[:at[copies]]
    size = copies << 16
    # The whole run, then an insert: the prefix is the run.
    d = parse_delta(_varint(size) + _varint(size + 2) + ops + b"\x02a\n")
    assert (d.prefix, d.starts) == (size, [size])
    # A base shorter than the run: the last copy goes past its end.
    with pytest.raises(PackFormatError):
        parse_delta(_varint(size - 1) + _varint(size) + ops)
    # A target shorter than the run: it builds more than it declares.
    with pytest.raises(PackFormatError):
        parse_delta(_varint(size) + _varint(size - 1) + ops)
    # The run broken by a copy from elsewhere: the prefix ends there.
    if copies > 1:
        broken = ops[:at[copies - 1]] + b"\x80"  # offset 0, 64 KiB, again
        d = parse_delta(_varint(size) + _varint(size) + broken)
        assert d.prefix == (copies - 1) << 16 and d.ops == [(0, 0x10000, 0)]
