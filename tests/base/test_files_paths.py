"""base.files' str paths: the same strings and answers as pathlib (which the check and
the hook no longer import), and the writers' return kinds."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import given
from hypothesis import strategies as st

from git_gasp.base.files import (
    atomic_write,
    exists,
    is_dir,
    is_file,
    is_link,
    is_within,
    join,
    parents,
    path_str,
    refuse_links,
    relative_to,
)

# Paths made of the pieces pathlib treats specially: empty parts, ".", "..", "//".
paths = st.lists(st.sampled_from(["a", "b", ".", "..", "", "x y"]), max_size=6).flatmap(
    lambda parts: st.sampled_from(["", "/", "//", "///"]).map(
        lambda lead: lead + "/".join(parts)))
trails = st.sampled_from(["", "/", "//"])


@given(paths, trails)
def test_path_str_and_parents_are_purepaths(path, trail):
    text = path + trail
    assert path_str(text) == str(PurePosixPath(text))
    assert parents(text) == [str(p) for p in PurePosixPath(text).parents]


@given(paths, paths)
def test_join_is_the_slash_operator(root, rel):
    assert join(root, rel) == str(PurePosixPath(root) / rel)
    assert join(Path(root), rel, "c") == str(Path(root, rel, "c"))


@given(paths, paths)
def test_relative_to_and_is_within_answer_as_pathlib(path, root):
    try:
        expected = PurePosixPath(path).relative_to(root).as_posix()
    except ValueError:
        expected = None
    assert is_within(path, root) == (expected is not None)
    if expected is None:
        with pytest.raises(ValueError):
            relative_to(path, root)
    else:
        assert relative_to(path, root) == expected


def test_the_predicates_answer_as_pathlib(tmp_path):
    (tmp_path / "file").write_bytes(b"x")
    (tmp_path / "dir").mkdir()
    (tmp_path / "to-file").symlink_to("file")
    (tmp_path / "to-dir").symlink_to("dir")
    (tmp_path / "dangling").symlink_to("nowhere")
    (tmp_path / "loop").symlink_to("loop")
    names = ["file", "dir", "to-file", "to-dir", "dangling", "loop", "missing", "file/under",
             "dir/", "to-dir/", "nul\0name"]
    for name in names:
        path = tmp_path / name if "\0" not in name else Path(f"{tmp_path}/{name}")
        text = f"{tmp_path}/{name}"
        got = (exists(text), is_dir(text), is_file(text), is_link(text))
        assert got == (path.exists(), path.is_dir(), path.is_file(), path.is_symlink()), name


def test_a_writer_returns_the_kind_of_path_it_was_given(tmp_path):
    written = atomic_write(str(tmp_path / "a"), b"1", root=str(tmp_path))
    assert written == str(tmp_path / "a") and isinstance(written, str)
    written = atomic_write(tmp_path / "b", b"2", root=tmp_path)
    assert written == tmp_path / "b" and isinstance(written, Path)
    assert refuse_links(f"{tmp_path}/./c/", tmp_path) == str(tmp_path / "c")
    assert refuse_links(tmp_path / "c") == tmp_path / "c"


def test_a_str_target_is_refused_through_a_link_as_a_path_is(tmp_path):
    from git_gasp.base.files import UnsafePath

    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to("real")
    for target in (str(tmp_path / "link" / "f"), tmp_path / "link" / "f"):
        with pytest.raises(UnsafePath, match=f"lies under a link \\({tmp_path}/link\\)"):
            atomic_write(target, b"x", root=str(tmp_path))
    with pytest.raises(UnsafePath, match="outside"):
        atomic_write(os.path.join(str(tmp_path), "..", "x"), b"x", root=str(tmp_path))
    assert os.listdir(tmp_path / "real") == []
