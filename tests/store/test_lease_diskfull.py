"""A lease that cannot be written (a full disk, a read-only file system) is one
LeaseError line, and leaves no temporary file for `git add -A` to commit."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from git_gasp.store import lease as lease_mod
from git_gasp.store.lease import Lease, LeaseError
from tests.testing.run import git


def _litter(agent: Path) -> list[str]:
    return sorted(p.name for p in (agent / ".agent").iterdir() if p.name.startswith(".lease"))


def test_a_full_disk_while_taking_the_lease_is_one_line_and_no_litter(agent, monkeypatch):
    real_write = os.write

    def full(fd, data):
        if os.readlink(f"/proc/self/fd/{fd}").endswith(".new"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(lease_mod.os, "write", full)
    with pytest.raises(LeaseError, match="No space left on device"):
        Lease(agent, "w1").ensure()
    assert _litter(agent) == [] and not (agent / ".agent" / "lease").exists()


def test_a_short_write_is_a_full_disk_too(agent, monkeypatch):
    monkeypatch.setattr(lease_mod.os, "write", lambda fd, data: 0)
    with pytest.raises(LeaseError, match="cannot take"):
        Lease(agent, "w1").ensure()
    assert _litter(agent) == []


def test_a_read_only_agent_dir_is_one_line(agent, monkeypatch):
    def readonly(*args, **kw):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(lease_mod.os, "open", readonly)
    with pytest.raises(LeaseError, match="Read-only file system"):
        Lease(agent, "w1").ensure()


def test_what_a_killed_writer_could_leave_is_ignored_by_the_gitignore_init_writes(agent):
    for name in (".agent/.lease.123.abcd.new", ".agent/.lease.stale.123.abcd",
                 "state/.events.jsonl.123.abcd.tmp", ".AGENT.md.9.ff.tmp"):
        (agent / name).write_bytes(b"")
    assert git(agent, "status", "--porcelain", "--untracked-files=all") == ""
