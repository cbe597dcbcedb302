"""`git gasp check` shows check 4's walk progress on a terminal's stderr only: after
the walk has lasted a second, rewritten in place, cleared at the end; never on a pipe,
never with --json."""

from __future__ import annotations

import io
import os
import pty
import sys

import pytest

from git_gasp.cli.commands import check as check_cmd
from git_gasp.cli.commands import check_run
from git_gasp.conformance import checks
from git_gasp.conformance.history import check as history


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_progress_waits_a_second_then_rewrites_one_line_and_clears_it():
    out, clock = io.StringIO(), Clock()
    progress = check_run.WalkProgress(out, clock=clock)
    progress(10, 100)
    clock.now += 0.9
    progress(20, 100)
    assert out.getvalue() == ""  # the walk has not lasted a second yet
    clock.now += 0.2
    progress(30, 100)
    progress(100, 100)
    progress.clear()
    assert out.getvalue() == ("\rcheck 4: walked 30/100 commits"
                              "\rcheck 4: walked 100/100 commits"
                              "\r" + " " * len("check 4: walked 100/100 commits") + "\r")


def test_only_a_terminal_gets_progress():
    assert check_run.terminal_progress(io.StringIO()) is None
    read, write = os.pipe()
    with os.fdopen(write, "w") as pipe:
        assert check_run.terminal_progress(pipe) is None
    os.close(read)
    leader, follower = pty.openpty()
    with os.fdopen(follower, "w") as tty:
        assert isinstance(check_run.terminal_progress(tty), check_run.WalkProgress)
    os.close(leader)


def _fake_walk(monkeypatch, calls: list) -> None:
    real = history.check_history

    def walk(root, *, declared=(), use_cache=True, log_path=b"state/events.jsonl",
             progress=None):
        calls.append(progress)
        if progress is not None:
            progress(1, 3)
            progress(3, 3)
        return real(root, use_cache=use_cache, log_path=log_path)

    monkeypatch.setattr(checks, "check_history", walk)
    monkeypatch.setattr(check_run, "PROGRESS_DELAY", 0.0)


def _run_check(*args: str) -> None:
    with pytest.raises(SystemExit):
        check_cmd.check.main(list(args), standalone_mode=True)


@pytest.mark.parametrize("forked", [False, True])
@pytest.mark.parametrize("as_json", [False, True])
def test_check_on_a_pseudo_terminal_shows_and_clears_the_walk(agent, monkeypatch, as_json,
                                                              forked):
    """Also when the walk runs in a forked child (`conformance.forked`), which draws and wipes
    the line itself (`calls` then stays in the child)."""
    calls: list = []
    _fake_walk(monkeypatch, calls)
    if not forked:
        monkeypatch.setenv("GASP_NO_FORK", "1")
    leader, follower = pty.openpty()
    tty = os.fdopen(follower, "w")
    monkeypatch.setattr(sys, "stderr", tty)
    _run_check(str(agent), *(["--json"] if as_json else []))
    tty.close()  # then the terminal's side reads what was written, and then EIO
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    shown = b"".join(chunks).decode()
    if as_json:
        assert calls == ([] if forked else [None]) and "check 4" not in shown
    else:
        assert forked or (calls and calls[0] is not None)
        assert "\rcheck 4: walked 1/3 commits" in shown
        assert "\rcheck 4: walked 3/3 commits" in shown
        assert shown.endswith("\r" + " " * len("check 4: walked 3/3 commits") + "\r")


def test_check_on_a_pipe_shows_no_progress(agent, monkeypatch):
    calls: list = []
    _fake_walk(monkeypatch, calls)
    monkeypatch.setenv("GASP_NO_FORK", "1")  # to see `calls` (the walk runs here)
    read, write = os.pipe()
    pipe = os.fdopen(write, "w")
    monkeypatch.setattr(sys, "stderr", pipe)
    _run_check(str(agent))
    pipe.close()
    with os.fdopen(read) as r:
        assert "check 4" not in r.read()
    assert calls == [None]
