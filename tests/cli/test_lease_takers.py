"""Every command that writes into the agent's state takes the lease first: `import`
(with `--wait[=S]` as `record` has it), `memory synthesize` and `snapshot` are refused
while another worker writes, and wait for it when asked to."""

from __future__ import annotations

import threading

import pytest

from git_gasp.store.lease import Lease
from tests.adapters.samples import CLAUDE_TRANSCRIPT
from tests.testing.run import gasp, out


@pytest.fixture
def held(agent):
    """The lease held by another, live worker (this test's process), over a log with a
    goal and a fact."""
    goal = gasp(agent, "record", "goal", "--title", "Snapshot me").stdout.decode().strip()
    assert gasp(agent, "memory", "add", "a fact", "--from", goal).returncode == 0
    lease = Lease(agent, "someone-else@elsewhere")
    lease.ensure()
    yield lease
    lease.release(force=True)


def files_under(path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()
            and ".git" not in p.parts and p.name != "lease"}


@pytest.mark.parametrize("args", [
    ("memory", "synthesize"), ("snapshot",), ("import", "claude-code", str(CLAUDE_TRANSCRIPT)),
    ("import", "claude-code", str(CLAUDE_TRANSCRIPT), "--wait=0.3")])
def test_refused_while_another_worker_writes_and_nothing_written(agent, held, args):
    before = files_under(agent)
    proc = gasp(agent, *args)
    err = proc.stderr.decode()
    assert proc.returncode == 1, out(proc)
    assert err.startswith("git gasp: error:") and "someone-else@elsewhere" in err, err
    assert ("after waiting 0.3 s" in err) == ("--wait=0.3" in args)
    assert files_under(agent) == before


@pytest.mark.slow
@pytest.mark.parametrize("args", [
    ("memory", "synthesize", "--wait=30"), ("snapshot", "--wait=30"),
    ("import", "claude-code", str(CLAUDE_TRANSCRIPT), "--no-commit", "--wait=30"),
    ("import", "claude-code", str(CLAUDE_TRANSCRIPT), "--no-commit", "--wait")])
def test_with_wait_it_lands_once_the_holder_lets_go(agent, held, args):
    timer = threading.Timer(1.0, held.release)
    timer.start()
    try:
        proc = gasp(agent, *args)
    finally:
        timer.join()
    assert proc.returncode == 0, out(proc)
    assert not (agent / ".agent/lease").exists()  # given back
    landed = {"import": lambda: b"run.started" in (agent / "state/events.jsonl").read_bytes(),
              "memory": lambda: b"a fact" in (agent / "memory/active_memory.md").read_bytes(),
              "snapshot": lambda: any((agent / "snapshots").rglob("graph.json"))}
    assert landed[args[0]]()
