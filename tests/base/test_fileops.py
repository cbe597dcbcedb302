"""The mechanics under `base.files` (git_gasp.base.fileops): a replacement dropped on a
failure or an abort, the file lock."""

from __future__ import annotations

import os
import threading

import pytest

from git_gasp.base.fileops import AtomicFile, FileLocked, file_lock, try_lock


def test_failure_inside_the_block_leaves_the_target_and_no_temp_file(tmp_path):
    target = tmp_path / "f"
    target.write_bytes(b"keep")
    with pytest.raises(RuntimeError), AtomicFile(target) as fh:
        fh.write(b"half")
        raise RuntimeError("killed")
    assert target.read_bytes() == b"keep"
    assert os.listdir(tmp_path) == ["f"]


def test_abort_drops_the_write(tmp_path):
    fh = AtomicFile(tmp_path / "f")
    fh.write(b"x")
    fh.abort()
    fh.close()  # a no-op after abort
    assert os.listdir(tmp_path) == []


def test_file_lock_times_out_with_file_locked(tmp_path):
    lock = tmp_path / "l"
    got = threading.Event()
    release = threading.Event()

    def holder():
        with file_lock(lock, "test"):
            got.set()
            release.wait(5)

    thread = threading.Thread(target=holder)
    thread.start()
    got.wait(5)
    try:
        with try_lock(lock, 0.05) as held:
            assert held is False
        with pytest.raises(FileLocked, match="test lock"), file_lock(lock, "test", timeout=0.05):
            pass
    finally:
        release.set()
        thread.join()
    with try_lock(lock, 0.05) as held:
        assert held is True
