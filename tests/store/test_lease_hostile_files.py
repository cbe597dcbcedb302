"""A lease that is a link to /dev/zero, a FIFO or a huge file (a cloned repository can
commit one) is one line for every reader — the writers, `lease status`, `doctor` — never
an exhausted memory or a hang."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from git_gasp.base.fileops import NotARegularFile, read_regular_file
from tests.testing.run import gasp, out

LEASE = ".agent/lease"


def _plant(agent: Path, kind: str) -> None:
    path = agent / LEASE
    path.unlink(missing_ok=True)
    if kind == "zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "huge":
        with open(path, "wb") as f:
            f.truncate(1 << 30)  # sparse: 1 GiB of zeros
    elif kind == "dir-link":
        (agent / "elsewhere").mkdir()
        os.symlink(agent / "elsewhere", agent / ".agent" / "sub")


@pytest.mark.parametrize("kind", ["zero", "fifo", "huge"])
@pytest.mark.parametrize("args", [("lease", "status"), ("doctor",),
                                  ("record", "goal", "--title", "t")])
def test_every_reader_refuses_a_hostile_lease_in_one_line(agent, kind, args):
    _plant(agent, kind)
    proc = gasp(agent, *args)
    text = out(proc)
    assert proc.returncode in (1, 2), text
    assert "internal error" not in text and "Traceback" not in text
    assert ".agent/lease" in text


def test_the_reader_itself(tmp_path):
    (tmp_path / "f").write_bytes(b"abc")
    assert read_regular_file(tmp_path / "f", limit=3) == b"abc"
    assert read_regular_file(tmp_path / "missing", limit=3) is None
    with pytest.raises(NotARegularFile, match="larger than 2"):
        read_regular_file(tmp_path / "f", limit=2)
    (tmp_path / "link").symlink_to(tmp_path / "f")
    with pytest.raises(NotARegularFile, match="symbolic link"):
        read_regular_file(tmp_path / "link", limit=9)
    (tmp_path / "d").mkdir()
    (tmp_path / "via").symlink_to(tmp_path / "d")
    (tmp_path / "d" / "g").write_bytes(b"x")
    with pytest.raises(NotARegularFile, match="link"):
        read_regular_file(tmp_path / "via" / "g", limit=9, root=tmp_path)
