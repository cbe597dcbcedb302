"""conformance/forked: a function's value comes back from a forked child, or is computed in the
caller when there is no child or it died."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from git_gasp.conformance.forked import NO_FORK_ENV, Forked, fork_allowed

pytestmark = pytest.mark.skipif(not fork_allowed(), reason="no safe fork here")


def test_value_comes_from_the_child() -> None:
    parent = os.getpid()
    job = Forked(lambda: (os.getpid(), {"big": b"x" * 300_000}))
    assert job.forked
    pid, data = job.result()
    assert pid != parent and data == {"big": b"x" * 300_000}
    assert job.result() == (pid, data)  # asked twice: the same value, no second run


def test_exception_is_raised_in_the_caller() -> None:
    def boom() -> None:
        raise ValueError("bad history")

    job = Forked(boom)
    with pytest.raises(ValueError, match="bad history"):
        job.result()


def test_a_killed_child_means_the_caller_computes_it() -> None:
    parent = os.getpid()

    def fn() -> int:
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return 42

    job = Forked(fn)
    assert job.forked
    assert job.result() == 42


def test_turned_off_by_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NO_FORK_ENV, "1")
    job = Forked(os.getpid)
    assert not job.forked
    assert job.result() == os.getpid()


def test_no_fork_while_another_thread_runs() -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        job = Forked(os.getpid)
        assert not job.forked
        assert job.result() == os.getpid()
    finally:
        stop.set()
        thread.join()


def test_cancel_kills_and_reaps_the_child() -> None:
    job = Forked(lambda: threading.Event().wait(60))
    pid = job._pid
    job.cancel()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # already reaped: no such child
