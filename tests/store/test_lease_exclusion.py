"""The lease excludes every other process, whatever its worker's name: a `git gasp
record` started while another process of the same worker (a sync, say) holds the lease
is refused, and only a lease kept between one worker's commands (pid 0) is reusable."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from git_gasp.store.lease import Lease, LeaseHeld, default_worker_id, parse_lease
from tests.testing.run import gasp, out

HOLDER = r"""
import sys, time
from git_gasp.store.lease import Lease
lease = Lease(sys.argv[1], sys.argv[2])
lease.ensure()
print("held", flush=True)
time.sleep(60)
"""


def _hold(agent: Path, worker: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(agent), worker],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_record_beside_another_process_of_the_same_worker_is_refused(agent):
    worker = default_worker_id()  # what the CLI uses, and what a CLI sync uses
    holder = _hold(agent, worker)
    try:
        before = (agent / "state" / "events.jsonl").read_bytes()
        proc = gasp(agent, "record", "goal", "--title", "during the sync")
        assert proc.returncode == 1, out(proc)
        assert "lease held by" in out(proc) and str(holder.pid) in out(proc)
        assert (agent / "state" / "events.jsonl").read_bytes() == before  # nothing appended
        # nor may it remove the other process's lease
        assert gasp(agent, "lease", "release").returncode != 0
        assert parse_lease((agent / ".agent" / "lease").read_bytes()).pid == holder.pid
    finally:
        holder.kill()
        holder.wait()


def test_the_same_worker_takes_over_from_its_own_dead_process_under_its_own_pid(agent):
    holder = _hold(agent, "w")
    holder.kill()
    holder.wait()
    lease = Lease(agent, "w")
    rec = lease.ensure()
    assert rec.pid != holder.pid and lease.reclaimed is None  # its own: not a reclaim


def test_a_lease_kept_between_commands_is_reused_and_then_held_by_pid(agent):
    first = Lease(agent, "w")
    first.ensure()
    first.keep_between_commands()
    assert parse_lease((agent / ".agent" / "lease").read_bytes()).pid == 0
    second = Lease(agent, "w")
    rec = second.ensure()
    assert rec.pid > 0  # taken by this process: no other process of "w" can share it
    with pytest.raises(LeaseHeld):
        Lease(agent, "someone-else").ensure()
