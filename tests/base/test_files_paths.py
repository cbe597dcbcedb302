"""base.files' writers: a pathlib.Path back whether given a str or a Path, and a str
target refused through a link as a Path is."""

from __future__ import annotations

import os

import pytest

from git_gasp.base.fileops import UnsafePath
from git_gasp.base.files import atomic_write, refuse_links


def test_a_writer_returns_a_path_whatever_it_was_given(tmp_path):
    assert atomic_write(str(tmp_path / "a"), b"1", root=str(tmp_path)) == tmp_path / "a"
    assert atomic_write(tmp_path / "b", b"2", root=tmp_path) == tmp_path / "b"
    assert (tmp_path / "a").read_bytes() == b"1" and (tmp_path / "b").read_bytes() == b"2"
    assert refuse_links(f"{tmp_path}/./c/", tmp_path) == tmp_path / "c"
    assert refuse_links(str(tmp_path / "c")) == tmp_path / "c"


def test_a_str_target_is_refused_through_a_link_as_a_path_is(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to("real")
    for target in (str(tmp_path / "link" / "f"), tmp_path / "link" / "f"):
        with pytest.raises(UnsafePath, match=f"lies under a link \\({tmp_path}/link\\)"):
            atomic_write(target, b"x", root=str(tmp_path))
    with pytest.raises(UnsafePath, match="outside"):
        atomic_write(os.path.join(str(tmp_path), "..", "x"), b"x", root=str(tmp_path))
    assert os.listdir(tmp_path / "real") == []
