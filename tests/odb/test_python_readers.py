"""The trees, deltas and commits odb reads agree with git and dulwich: trees as git's
``ls-tree`` lists them, the prover's delta parser with what dulwich's ``apply_delta``
builds, and the typed reads (`Objects`) read every object of a packed repository as
git does."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from dulwich.pack import apply_delta, create_delta
from hypothesis import given, settings
from hypothesis import strategies as st

from git_gasp.odb.database import ObjectDatabase
from git_gasp.odb.deltas import PackFormatError, parse_delta
from git_gasp.odb.objects import ObjectError, Objects, commit_info, parse_tree, plain_commit
from git_gasp.odb.packs import PackFiles
from tests.testing.hermetic import isolate
from tests.testing.repos import copy_repo
from tests.testing.run import git


def test_real_trees_read_the_same(tmp_path):
    root = tmp_path / "r"
    git(tmp_path, "init", "-q", str(root))
    (root / "sub").mkdir()
    for name in ("a.txt", "b b", "sub/c", "ünï"):
        (root / name).write_bytes(name.encode() * 3)
    os.symlink("a.txt", root / "link")
    (root / "x.sh").write_bytes(b"#!/bin/sh\n")
    os.chmod(root / "x.sh", 0o755)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "t")
    for rev in ("HEAD^{tree}", "HEAD:sub"):
        raw = subprocess.run(["git", "cat-file", "tree", rev], cwd=root,
                             capture_output=True, check=True).stdout
        theirs = _ls_tree(root, git(root, "rev-parse", rev).strip())
        assert {name: tuple(e) for name, e in parse_tree(raw).items()} == theirs and theirs


def _deltas(base: bytes, target: bytes) -> bytes:
    return b"".join(create_delta(base, target))


texts = st.binary(max_size=300) | st.lists(st.sampled_from([b"line\n", b"other\n", b"x" * 70]),
                                           max_size=40).map(b"".join)


@settings(max_examples=300, deadline=None)
@given(texts, texts, st.integers(0, 400), st.binary(max_size=4))
def test_the_prover_parses_deltas_as_dulwich_applies_them(base, target, cut, junk):
    """What the prover parses, dulwich builds: the declared sizes, and the first
    `prefix` bytes of the target are the base's (what the prover proves from)."""
    delta = _deltas(base, target)
    parsed = parse_delta(delta)
    assert b"".join(apply_delta(base, delta)) == target
    assert (parsed.base_size, parsed.target_size) == (len(base), len(target))
    assert target[:parsed.prefix] == base[:parsed.prefix]
    for candidate in (delta[:cut], delta + junk, junk + delta):
        try:
            ours = parse_delta(candidate)
        except PackFormatError:
            continue
        if ours.base_size != len(base):
            continue  # a wrong base: the prover proves nothing from it
        built = b"".join(apply_delta(base, candidate))  # parsed cleanly: dulwich builds it
        assert len(built) == ours.target_size and built[:ours.prefix] == base[:ours.prefix]


def _ls_tree(root, oid: str) -> dict:
    """git's own reading of tree `oid`: name -> (mode, hex id)."""
    out = subprocess.run(["git", "ls-tree", "-z", oid], cwd=root, capture_output=True,
                         check=True).stdout
    found = {}
    for item in out.split(b"\0")[:-1]:
        meta, name = item.split(b"\t", 1)
        mode, _kind, sha = meta.split(b" ")
        found[name] = (int(mode, 8), sha)
    return found


@pytest.fixture(scope="module")
def gc_repo(tmp_path_factory) -> Path:
    """90 commits, gc'd (deltified trees); built once per module and worker (180 git
    runs): copy it before changing it."""
    with pytest.MonkeyPatch.context() as mp:
        isolate(mp, tmp_path_factory.mktemp("gc-home"))
        parent = tmp_path_factory.mktemp("gc")
        root = parent / "r"
        git(parent, "init", "-q", str(root))
        for i in range(90):
            (root / f"f{i % 7}").write_bytes(b"%d\n" % i)
            (root / "d").mkdir(exist_ok=True)
            (root / "d" / f"g{i}").write_bytes(b"x")
            git(root, "add", "-A")
            git(root, "commit", "-qm", f"c{i}")
        git(root, "gc", "-q", "--aggressive")
    return root


@pytest.mark.slow  # over half a second: out of the fast loop
def test_packed_objects_read_as_git_reads_them(gc_repo):
    """A gc'd repository with deltified trees: every tree, commit and blob reads as git
    reads it, from the packs (`odb.packs`) and through the store alone."""
    root = gc_repo
    objects_dir = str(root / ".git" / "objects")
    listed = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch-check"],
                            cwd=root, capture_output=True, text=True, check=True).stdout
    kinds = dict(line.split()[:2] for line in listed.splitlines())
    assert sum(kind == "tree" for kind in kinds.values()) > 100
    for packs in (PackFiles.for_objects_dir(objects_dir), None):
        with ObjectDatabase.open(objects_dir) as odb:
            objects = Objects(odb.store)
            objects.packed = packs
            try:
                for oid, kind in kinds.items():
                    sha = oid.encode()
                    if kind == "tree":
                        got = objects.tree(sha)
                        assert {n: tuple(e) for n, e in got.items()} == _ls_tree(root, oid)
                    elif kind == "commit":
                        raw = git(root, "cat-file", "commit", oid).encode()
                        assert objects.commit(sha) == commit_info(raw)
                    elif kind == "blob":
                        data = subprocess.run(["git", "cat-file", "blob", oid], cwd=root,
                                              capture_output=True, check=True).stdout
                        assert objects.blob(sha) == data
            finally:
                if packs is not None:
                    packs.close()


@pytest.mark.slow  # over half a second: out of the fast loop
def test_an_unreadable_packed_object_is_refused_by_name(gc_repo, tmp_path):
    """A pack entry that does not inflate: refused with an error naming the object."""
    root = copy_repo(gc_repo, tmp_path / "r")
    objects_dir = root / ".git" / "objects"
    tree = git(root, "rev-parse", "HEAD^{tree}").strip()
    offsets = subprocess.run(["git", "verify-pack", "-v", *map(str, (objects_dir / "pack")
                                                               .glob("*.idx"))],
                             cwd=root, capture_output=True, text=True, check=True).stdout
    (line,) = [x for x in offsets.splitlines() if x.startswith(tree)]
    offset = int(line.split()[4])
    (pack,) = (objects_dir / "pack").glob("*.pack")
    os.chmod(pack, 0o644)
    data = bytearray(pack.read_bytes())
    data[offset + 2:offset + 12] = b"\xff" * 10  # the zlib stream after the entry header
    pack.write_bytes(bytes(data))
    with ObjectDatabase.open(str(objects_dir)) as odb:
        objects = Objects(odb.store)
        objects.packed = PackFiles.for_objects_dir(str(objects_dir))
        with pytest.raises(ObjectError, match=tree):
            objects.tree(tree.encode())


# The regular expression `plain_commit` replaced: the oracle it must agree with.
_IDENT = rb"[^\n]*> [0-9]+ [+-][0-9]{4}\n"
_PLAIN = re.compile(rb"tree ([0-9a-f]{40})\n((?:parent [0-9a-f]{40}\n)*)author " + _IDENT
                    + rb"committer " + _IDENT + rb"\n")
hexes = st.sampled_from([b"a" * 40, b"0123456789abcdef" * 2 + b"01234567", b"A" * 40,
                         b"a" * 39, b"a" * 41, b"a" * 64, b"g" * 40])
idents = st.tuples(st.sampled_from([b"A <a@b>", b"", b"x> y", b"<>", b"a\xff <b>"]),
                   st.sampled_from([b" ", b"", b"  "]),
                   st.sampled_from([b"1700000000", b"0", b"", b"12a", b"\xd9\xa1"]),
                   st.sampled_from([b" +0000", b" -0130", b" 0000", b" +000", b"+0000",
                                    b" +00000", b""])).map(lambda t: t[0] + b">" + t[1][1:] +
                                                          b" " * bool(t[1]) + t[2] + t[3])


@settings(max_examples=600, deadline=None)
@given(hexes, st.lists(hexes, max_size=3), idents, idents,
       st.sampled_from([b"\n\nmsg\n", b"\n", b"\ngpgsig x\n\nm", b"\n\n", b"\nencoding y\n\n"]),
       st.sampled_from([b"", b"x", b"tree "]))
@pytest.mark.slow  # over half a second: out of the fast loop
def test_plain_commits_read_as_the_old_pattern_read_them(tree, parents, author, committer,
                                                         tail, lead):
    data = (lead + b"tree " + tree + b"\n" + b"".join(b"parent " + p + b"\n" for p in parents)
            + b"author " + author + b"\ncommitter " + committer + tail)
    want = _PLAIN.match(data)
    got = plain_commit(data)
    if want is None:
        assert got is None
    else:
        found = want.group(2)
        assert got == (want.group(1), tuple(found[i + 7:i + 47] for i in range(0, len(found), 48)))


SIGNED = (b"tree " + b"a" * 40 + b"\nparent " + b"b" * 40 + b"\nparent " + b"c" * 40
          + b"\nauthor A <a@b> 1700000000 +0000\ncommitter A <a@b> 1700000000 +0000\n"
          + b"mergetag object " + b"d" * 40 + b"\n type commit\n tag v1\n\n"
          + b"gpgsig -----BEGIN PGP SIGNATURE-----\n \n x\n -----END PGP SIGNATURE-----\n"
          + b"encoding latin1\n\nmessage\n")


def test_any_commit_reads_as_dulwich_reads_it():
    from dulwich.objects import Commit

    for data in (SIGNED, SIGNED.replace(b"\nparent " + b"c" * 40, b"")):
        theirs = Commit.from_raw_string(1, data)
        assert commit_info(data) == (theirs.tree, tuple(theirs.parents))


def test_a_commit_without_a_tree_line_first_is_refused():
    for data in (b"parent " + b"b" * 40 + b"\ntree " + b"a" * 40 + b"\n\nm",
                 b"tree " + b"a" * 64 + b"\n\nm", b"tree " + b"a" * 40 + b"\nparent zz\n\nm"):
        with pytest.raises(ValueError):
            commit_info(data)
