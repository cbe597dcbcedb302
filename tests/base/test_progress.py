"""base/progress: `LABEL N/M UNIT` on a terminal after a delay, wiped at the end; no
progress object at all for a pipe or a file."""

from __future__ import annotations

import io
import os

from git_gasp.base.progress import Progress, on_terminal


def test_shows_after_the_delay_rewrites_in_place_and_wipes():
    now = [0.0]
    out = io.StringIO()
    progress = Progress(out, "kg index: read", "files", delay=1.0, clock=lambda: now[0])
    progress(1, 10)
    assert out.getvalue() == ""  # under a second: nothing
    now[0] = 1.5
    progress(256, 1000)
    progress(512, 1000)
    assert out.getvalue() == ("\rkg index: read 256/1000 files"
                              "\rkg index: read 512/1000 files")
    progress.clear()
    assert out.getvalue().endswith("\r" + " " * len("kg index: read 512/1000 files") + "\r")


def test_none_on_a_pipe_or_a_file(tmp_path):
    read, write = os.pipe()
    with os.fdopen(write, "w") as pipe:
        assert on_terminal(pipe, "import:", "files") is None
    os.close(read)
    with open(tmp_path / "f", "w") as f:
        assert on_terminal(f, "import:", "files") is None
    assert on_terminal(io.StringIO(), "x", "y") is None
