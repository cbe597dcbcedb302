"""A full disk is one line and exit 1 for every writer, and leaves nothing behind: the
log, the lease and the work tree are as they were."""

from __future__ import annotations

import errno
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from git_gasp.cli.handler import exit_for_error
from tests.testing.run import commit_all, gasp, git, out


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EDQUOT])
def test_the_machines_errors_are_one_line_and_exit_1(capsys, code):
    with pytest.raises(SystemExit) as stop:
        exit_for_error(OSError(code, "it failed", "/x/state/events.jsonl"))
    assert stop.value.code == 1
    assert capsys.readouterr().err == "git gasp: error: it failed: /x/state/events.jsonl\n"


def test_other_os_errors_stay_internal_errors(capsys):
    with pytest.raises(SystemExit) as stop:
        exit_for_error(OSError(errno.EBADF, "bad file descriptor"))
    assert stop.value.code == 3 and "internal error" in capsys.readouterr().err


@pytest.fixture
def small_disk(tmp_path: Path):
    """A 4 MiB tmpfs (root only: skipped where mounting is not allowed)."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)],
                          capture_output=True)
    if proc.returncode != 0 or shutil.which("mount") is None:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def _fill(disk: Path) -> None:
    with open(disk / "filler", "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass


@pytest.mark.parametrize("args", [("record", "goal", "--title", "t"),
                                  ("memory", "add", "a fact", "--from", "{event}"),
                                  ("snapshot",)])
@pytest.mark.slow  # over half a second: out of the fast loop
def test_writers_on_a_full_disk(small_disk, args):
    agent = small_disk / "agent"
    assert gasp(small_disk, "init", str(agent), "--agent-id", "tiny").returncode == 0
    assert gasp(agent, "record", "goal", "--title", "first").returncode == 0
    commit_all(agent, "a goal")
    event = json.loads((agent / "state" / "events.jsonl").read_bytes().split(b"\n")[0])["id"]
    before = {p: p.read_bytes() for p in agent.rglob("*") if p.is_file() and ".git" not in p.parts}
    _fill(small_disk)
    proc = gasp(agent, *(a.format(event=event) for a in args))
    text = out(proc)
    assert proc.returncode == 1, text
    assert len(text.strip().splitlines()) == 1 and text.startswith("git gasp: error: "), text
    (small_disk / "filler").unlink()
    after = {p: p.read_bytes() for p in agent.rglob("*") if p.is_file() and ".git" not in p.parts}
    assert after == before  # nothing half-written, no temporary file left
    assert git(agent, "status", "--porcelain", "--untracked-files=all") == ""
    assert gasp(agent, "check").returncode == 0
