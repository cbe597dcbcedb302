"""Store reliability: torn writes, SIGKILL, concurrent writers, the lease, clear errors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from git_gasp.protocol.envelope import parse_log
from git_gasp.runtime.state import AgentState
from git_gasp.store.append import TornLogError
from git_gasp.store.lease import Lease, LeaseCorrupt, LeaseHeld, LeaseRecord
from tests.runtime.helpers import assert_conformant, one_error_line, run_py
from tests.testing.run import gasp, out

pytestmark = pytest.mark.slow  # SIGKILLs and concurrent writers

# A child that records goals, then dies by SIGKILL halfway through writing one batch.
KILL_MID_WRITE = r"""
import os, signal, sys
from git_gasp.runtime.state import AgentState
s = AgentState.open(sys.argv[1], "killer")
for i in range(3):
    s.record_goal(f"goal {i}")
real = os.write
def half(fd, data):
    real(fd, bytes(data)[: len(data) // 2])
    os.kill(os.getpid(), signal.SIGKILL)
os.write = half
s.record_goal("never whole")
"""


def test_sigkill_mid_append_loses_only_that_batch_and_is_reported(agent):
    proc = run_py(KILL_MID_WRITE, str(agent))
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    data = (agent / "state/events.jsonl").read_bytes()
    lines = data.split(b"\n")
    assert len(lines) == 8 and lines[6].endswith(b'"never whole"},"causation_id":null,'
                                                  + lines[6].rsplit(b",", 1)[1])
    whole = b"".join(ln + b"\n" for ln in lines[:6])  # the three complete pairs
    assert len(parse_log(whole).events) == 6 and not parse_log(whole).errors
    with pytest.raises(TornLogError) as info:
        AgentState.open(agent, "next")
    msg = str(info.value)
    assert "state/events.jsonl:8: torn final line" in msg
    assert "line 7 (goal.created) lost its ops pair" in msg
    assert f"truncate -s {len(whole)} state/events.jsonl" in msg
    assert (agent / "state/events.jsonl").read_bytes() == data  # never silently truncated
    # every command says so in one line
    line = one_error_line(gasp(agent, "record", "goal", "--title", "x"))
    assert "torn final line" in line
    # following the hint repairs it; nothing before the batch was lost
    os.truncate(agent / "state/events.jsonl", len(whole))
    state = AgentState.open(agent, "next")
    assert sorted(n["props"]["title"] for n in state.graph.nodes.values()) == [
        "goal 0", "goal 1", "goal 2"]
    assert_conformant(agent)


LOOP_WRITER = r"""
import sys
from git_gasp.runtime.state import AgentState
s = AgentState.open(sys.argv[1], "looper")
print("ready", flush=True)
i = 0
while True:
    s.record_goal("g" * 2000 + str(i))
    i += 1
"""


def test_sigkill_at_a_random_moment(agent):
    child = subprocess.Popen([sys.executable, "-c", LOOP_WRITER, str(agent)],
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "ready"
    log = agent / "state/events.jsonl"
    deadline = time.monotonic() + 60
    while (not log.exists() or log.stat().st_size < 200_000) and time.monotonic() < deadline:
        time.sleep(0.01)
    child.send_signal(signal.SIGKILL)
    child.wait()
    data = log.read_bytes()
    parsed = parse_log(data[: data.rfind(b"\n") + 1])
    assert parsed.events and not parsed.errors
    if not data.endswith(b"\n"):
        with pytest.raises(TornLogError) as info:
            AgentState.open(agent, "next")
        torn_line = data.count(b"\n") + 1
        assert f":{torn_line}: torn final line" in str(info.value)
        cut = int(str(info.value).split("truncate -s ")[1].split()[0])
        os.truncate(log, cut)
    elif len(parsed.events) % 2:  # killed between the two lines of a batch
        os.truncate(log, data.rfind(b"\n", 0, len(data) - 1) + 1)
    state = AgentState.open(agent, "next")
    assert len(state.graph.nodes) == log.read_bytes().count(b"\n") // 2
    assert_conformant(agent)


CONTENDER = r"""
import os, sys, time
from git_gasp.store.lease import LeaseHeld
from git_gasp.runtime.state import AgentState
root, worker, go, mode = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
s = AgentState.open(root, worker)
while not os.path.exists(go):
    time.sleep(0.001)
if mode == "once":
    tried = os.path.join(os.path.dirname(go), "tried")
    try:
        for i in range(25):
            s.record_goal(f"{worker} {i}")
    except LeaseHeld as exc:
        open(os.path.join(tried, worker), "w").close()
        print("HELD", exc)
        sys.exit(3)
    open(os.path.join(tried, worker), "w").close()
    # hold the lease (this process's) until every writer has tried: a loaded machine may
    # start one so late that it would otherwise find the lease free again
    deadline = time.monotonic() + 60
    while len(os.listdir(tried)) < 8 and time.monotonic() < deadline:
        time.sleep(0.01)
    print("WROTE")
else:
    for i in range(10):
        while True:
            try:
                s.store.lease.ensure()
                break
            except LeaseHeld:
                time.sleep(0.002)
        s.record_goal(f"{worker} {i}")
        s.record_goal(f"{worker} {i} second")
        s.release()
    print("WROTE")
"""


def _contend(agent, mode: str) -> list[subprocess.Popen]:
    go = agent.parent / f"go-{mode}"
    (agent.parent / "tried").mkdir()
    procs = [subprocess.Popen([sys.executable, "-c", CONTENDER, str(agent), f"w{i}", str(go),
                               mode], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(8)]
    time.sleep(1.0)  # let every process open the state
    go.write_text("go")
    for p in procs:
        p.wait(timeout=120)
    return procs


def test_eight_writers_one_wins_others_told_who_holds_the_lease(agent):
    procs = _contend(agent, "once")
    outputs = [p.stdout.read() for p in procs]
    winners = [o for o in outputs if o.startswith("WROTE")]
    held = [o for o in outputs if o.startswith("HELD")]
    assert len(winners) == 1 and len(held) == 7, outputs + [p.stderr.read() for p in procs]
    assert all("lease held by w" in o for o in held)
    parsed = parse_log((agent / "state/events.jsonl").read_bytes())
    assert not parsed.errors and len(parsed.events) == 50
    writers = {e.payload["title"].split()[0] for e in parsed.events if e.kind == "goal.created"}
    assert len(writers) == 1
    assert_conformant(agent)


def test_eight_writers_taking_turns_never_interleave_or_lose_a_line(agent):
    procs = _contend(agent, "turns")
    assert all(p.returncode == 0 for p in procs), [p.stderr.read() for p in procs]
    parsed = parse_log((agent / "state/events.jsonl").read_bytes())
    assert not parsed.errors
    goals = [e for e in parsed.events if e.kind == "goal.created"]
    assert len(goals) == 8 * 10 * 2 and len(parsed.events) == 8 * 10 * 4
    titles = [e.payload["title"] for e in goals]
    assert len(set(titles)) == len(titles)
    # each lease turn (two goals) is contiguous: a turn's pair is never split by another worker
    for first, second in zip(titles[::2], titles[1::2], strict=True):
        assert second == first + " second"
    assert_conformant(agent)


def test_expired_lease_is_stolen(agent):
    (agent / ".agent").mkdir(exist_ok=True)
    (agent / ".agent/lease").write_bytes(LeaseRecord("old", 1, 1000).to_bytes())
    state = AgentState.open(agent, "new")
    state.record_goal("after the steal")
    assert Lease(agent).read().worker_id == "new"
    assert not list((agent / ".agent").glob(".lease.*"))


def test_live_lease_refuses_and_corrupt_lease_is_refused(agent):
    far = int(time.time() * 1000) + 3_600_000
    (agent / ".agent/lease").write_bytes(LeaseRecord("someone", 42, far).to_bytes())
    state = AgentState.open(agent, "me")
    with pytest.raises(LeaseHeld, match=r"lease held by someone \(pid 42"):
        state.record_goal("no")
    assert (agent / "state/events.jsonl").read_bytes() == b""
    line = one_error_line(gasp(agent, "record", "goal", "--title", "x"))
    assert "lease held by someone" in line
    (agent / ".agent/lease").write_bytes(b"{not json")
    with pytest.raises(LeaseCorrupt, match="corrupt"):
        state.record_goal("no")
    assert (agent / ".agent/lease").read_bytes() == b"{not json"
    assert "is corrupt" in one_error_line(gasp(agent, "run", "start", "--task", "t"))
    proc = gasp(agent, "lease", "release", "--force")
    assert proc.returncode == 0, out(proc)
    assert gasp(agent, "record", "goal", "--title", "x").returncode == 0


def test_lease_renewal_and_release(agent):
    lease = Lease(agent, "me", ttl_ms=1000)
    first = lease.ensure()
    time.sleep(0.6)
    second = lease.ensure()  # past half its TTL: renewed by tmp+rename
    assert second.expires_at_ms > first.expires_at_ms
    proc = gasp(agent, "lease", "status")
    assert "held: me" in out(proc)
    with pytest.raises(LeaseHeld):
        Lease(agent, "other").release()
    lease.release()
    assert Lease(agent).read() is None


def test_bad_log_and_missing_manifest_fail_with_one_line(agent):
    log = agent / "state/events.jsonl"
    log.write_bytes(b'{"id":"x"}\n')
    for argv in (("record", "goal", "--title", "x"), ("run", "start", "--task", "t"),
                 ("log",), ("lineage", "x"), ("memory", "list"), ("journal",),
                 ("commit-run",)):
        assert "state/events.jsonl:1: not a valid event" in one_error_line(gasp(agent, *argv))
    log.write_bytes(b"")
    (agent / "AGENT.md").unlink()
    for argv in (("record", "goal", "--title", "x"), ("run", "finish", "--outcome", "o"),
                 ("log",), ("identity", "verify"), ("fork", "b")):
        assert "AGENT.md" in one_error_line(gasp(agent, *argv))


def test_writer_that_ignores_the_lease_is_detected(agent):
    a = AgentState.open(agent, "a")
    a.record_goal("one")
    with (agent / "state/events.jsonl").open("ab") as fh:  # a rogue append, no lease
        fh.write(b"garbage\n")
    with pytest.raises(Exception, match="not a valid event"):
        a.record_goal("two")
    assert json.loads((agent / ".agent/lease").read_text())["worker_id"] == "a"
