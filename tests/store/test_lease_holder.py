"""The lease records its holder (host, pid, start time, pid namespace): a holder that is a
dead process of this host is taken over at once, without --force; one of another host
(or an older lease without a host) is never judged dead."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from git_gasp.store import holder
from git_gasp.store.lease import (
    Lease,
    LeaseCorrupt,
    LeaseHeld,
    LeaseRecord,
    parse_lease,
    span,
    when,
)

FAR = 2**62
TAKER = r"""
import sys, time
from git_gasp.store.lease import Lease
Lease(sys.argv[1], "child").ensure()
print("held", flush=True)
time.sleep(60)
"""


def _holder_child(agent) -> subprocess.Popen:
    """A real process that takes the lease and waits (to be SIGKILLed)."""
    proc = subprocess.Popen([sys.executable, "-c", TAKER, str(agent)], stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline() == b"held\n"
    return proc


def _kill(proc: subprocess.Popen, *, reap: bool = True) -> None:
    proc.send_signal(signal.SIGKILL)
    if reap:
        proc.wait()
    else:  # a zombie: killed, not yet waited for
        while holder._stat(proc.pid) is not None and holder._stat(proc.pid)[0] not in "ZX":
            time.sleep(0.01)


def _me(**changes) -> LeaseRecord:
    pid = os.getpid()
    fields = {"worker_id": "other", "pid": pid, "expires_at_ms": FAR,
              "host": holder.this_host(), "started": holder.start_time(pid),
              "pidns": holder.pid_namespace()}
    fields.update(changes)
    return LeaseRecord(**fields)


def _write(agent, rec: LeaseRecord) -> None:
    (agent / ".agent" / "lease").write_bytes(rec.to_bytes())


@pytest.mark.parametrize("reap", [True, False], ids=["reaped", "zombie"])
def test_a_dead_holders_lease_is_taken_over_at_once(agent, reap):
    child = _holder_child(agent)
    held = Lease(agent).read()
    assert held is not None and held.worker_id == "child" and held.pid == child.pid
    assert held.host == holder.this_host() and held.started is not None
    with pytest.raises(LeaseHeld, match=r"lease held by child \(pid \d+ on .*, running, until"):
        Lease(agent, "me").ensure()
    _kill(child, reap=reap)
    try:
        assert held.dead() and "no longer running" in held.describe()
        seen = []
        mine = Lease(agent, "me")
        mine.on_reclaim = seen.append
        rec = mine.ensure()  # no wait for the 10 minutes, no --force
        assert rec.worker_id == "me" and rec.pid == os.getpid()
        assert mine.reclaimed == held and seen == [held]
        assert not list((agent / ".agent").glob(".lease.*"))
    finally:
        child.wait()


def test_release_of_a_dead_holders_lease_needs_no_force(agent):
    child = _holder_child(agent)
    with pytest.raises(LeaseHeld, match="running: let it finish"):
        Lease(agent, "me").release()
    _kill(child)
    removed = Lease(agent, "me").release()
    assert removed is not None and removed.worker_id == "child"
    assert Lease(agent).read() is None


def test_a_reused_pid_is_not_the_holder(agent):
    """Our own pid with another start time: the holder was another process, now gone."""
    mine = _me()
    assert mine.holder().state == holder.ALIVE
    if mine.started is None:
        pytest.skip("no /proc/<pid>/stat here: a reused pid cannot be told apart")
    reused = _me(started=mine.started + 1)
    assert reused.holder().state == holder.DEAD
    assert "pid now belongs to another process" in reused.holder().why
    _write(agent, reused)
    assert Lease(agent, "me").ensure().worker_id == "me"


def test_a_live_holder_keeps_the_lease(agent):
    _write(agent, _me())
    with pytest.raises(LeaseHeld, match=r"running.*wait for it to finish \(or stop pid"):
        Lease(agent, "me").ensure()


@pytest.mark.parametrize("changes, why", [
    ({"host": "elsewhere.example"}, "on another host"),
    ({"host": None, "started": None, "pidns": None}, "older lease without its host"),
    ({"pidns": "pid:[1]"}, "another pid namespace"),
    ({"pid": 2**22 + 12345}, None),  # no such pid, but on another host: still unknown
])
def test_a_holder_we_cannot_see_is_never_judged_dead(agent, changes, why):
    if why is None:
        changes = {**changes, "host": "elsewhere.example"}
        why = "on another host"
    rec = _me(**changes)
    assert rec.holder().state == holder.UNKNOWN and why in rec.holder().why
    _write(agent, rec)
    with pytest.raises(LeaseHeld, match="if that worker is gone, `git gasp lease release --force`"):
        Lease(agent, "me").ensure()
    with pytest.raises(LeaseHeld, match="--force removes it anyway"):
        Lease(agent, "me").release()
    assert Lease(agent, "me").release(force=True) == rec


def test_old_lease_files_still_parse_and_new_ones_roundtrip():
    old = parse_lease(json.dumps({"worker_id": "w", "pid": 3, "expires_at_ms": 5}).encode())
    assert old == LeaseRecord("w", 3, 5) and old.host is None
    assert b"host" not in old.to_bytes()
    new = _me()
    assert parse_lease(new.to_bytes()) == new
    for bad in ({"worker_id": "w", "pid": 3, "expires_at_ms": 5, "host": 7},
                {"worker_id": "w", "pid": 3, "expires_at_ms": 5, "started": "x"},
                {"worker_id": "w", "pid": 3, "expires_at_ms": 5, "other": 1},
                {"worker_id": "w", "pid": 3, "host": "h"}):
        with pytest.raises(LeaseCorrupt):
            parse_lease(json.dumps(bad).encode())


def test_expiry_is_a_date_not_epoch_ms():
    rec = LeaseRecord("w", 3, 1_000_000)
    text = rec.describe(at_ms=1_000_000 - 65_000)
    assert "1000000" not in text and when(1_000_000) in text and "(in 1m 5s)" in text
    assert "ago)" in rec.describe(at_ms=1_000_000 + 3_600_000)
    assert [span(ms) for ms in (0, 45_000, 3_599_000, 7_500_000, 90_000_000)] == \
        ["0s", "45s", "59m 59s", "2h 5m", "1d 1h"]


def test_a_lease_kept_between_cli_commands_is_no_dead_process(tmp_path):
    """The CLI keeps the lease while a run is open though each command's process ends:
    kept with no pid, it is never judged dead, so another worker waits for its expiry
    (or `lease release --force`), and its own worker goes on holding it."""
    from git_gasp.store.lease import Lease, LeaseHeld

    mine = Lease(tmp_path, "w1")
    mine.ensure()
    mine.keep_between_commands()
    kept = mine.read()
    assert kept.pid == 0 and not kept.dead() and not kept.expired()
    assert "kept by its worker between commands" in kept.describe()
    with pytest.raises(LeaseHeld):
        Lease(tmp_path, "w2").ensure()
    again = Lease(tmp_path, "w1").ensure()  # the worker's next command
    assert again.worker_id == "w1"
