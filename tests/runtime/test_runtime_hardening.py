"""Failure paths of the runtime: refused amends, failed appends, symlinked logs, locations."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from git_gasp.base.errors import GaspError
from git_gasp.runtime.identity import amend_identity, verify_identity
from git_gasp.runtime.memory import Facts
from git_gasp.runtime.policy import PolicyDenied
from git_gasp.runtime.state import AgentState
from git_gasp.store.append import LogError, append_line_file
from tests.runtime.helpers import assert_conformant
from tests.testing.run import gasp, out


def _tree(root: Path) -> dict[str, bytes]:
    """Every file of the repo outside .git (and the lease, which an open takes)."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(".git/") or rel == ".git" or rel == ".agent/lease":
            continue
        out[rel] = b"<dir>" if path.is_dir() else path.read_bytes()
    return out


def _deny_decisions(agent: Path) -> None:
    (agent / ".agent/config.toml").write_text(
        '[executor]\nmodel = ""\n[policy.nodes]\ndecision = "deny"\n')


def test_denied_identity_amend_changes_nothing_on_disk(agent):
    _deny_decisions(agent)
    state = AgentState.open(agent, "w")
    before = _tree(agent)
    changes = {"identity/IDENTITY.md": b"# Identity\n\nchanged\n",
               "identity/sub/NEW.md": b"new file in a new directory\n"}
    with pytest.raises(PolicyDenied, match="decision"):
        amend_identity(state, "Jane", "try", changes)
    assert _tree(agent) == before
    verify_identity(agent)


def test_amend_failing_at_the_append_puts_the_old_bytes_back(agent, monkeypatch):
    state = AgentState.open(agent, "w")
    before = _tree(agent)
    written = {}

    def fail(events):
        written.update((rel, (agent / rel).read_bytes())
                       for rel in ("identity/IDENTITY.md", "AGENT.md"))
        raise LogError("lease lost")

    monkeypatch.setattr(state.store, "append", fail)
    with pytest.raises(LogError, match="lease lost"):
        amend_identity(state, "Jane", "try", {"identity/IDENTITY.md": b"changed\n",
                                              "identity/x/y.md": b"y\n"})
    assert written["identity/IDENTITY.md"] == b"changed\n"  # the writes did happen...
    assert _tree(agent) == before  # ...and were undone
    assert not list(agent.glob("identity/.*.tmp"))


def test_allowed_amend_still_commits_and_verifies(agent):
    state = AgentState.open(agent, "w")
    _commit, old, new = amend_identity(state, "Jane", "sharpen",
                                       {"identity/IDENTITY.md": b"# Identity\n\nsharper\n"})
    assert old != new and verify_identity(agent) == (new, new)
    assert_conformant(agent)


def _half_then_fail(monkeypatch):
    real = os.write

    def half(fd, data):
        real(fd, bytes(data)[: max(1, len(data) // 2)])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", half)


def test_failed_log_write_leaves_no_torn_tail(agent, monkeypatch):
    state = AgentState.open(agent, "w")
    state.record_goal("kept")
    log = agent / "state/events.jsonl"
    data = log.read_bytes()
    _half_then_fail(monkeypatch)
    with pytest.raises(LogError, match="No space left on device"):
        state.record_goal("lost")
    monkeypatch.undo()
    assert log.read_bytes() == data
    state.record_goal("after")  # the store still agrees with the file
    state.release()
    titles = [n["props"].get("title") for n in AgentState.open(agent, "w2").graph.iter_nodes()]
    assert "kept" in titles and "after" in titles and "lost" not in titles


def test_failed_fsync_truncates_and_raises_log_error(agent, monkeypatch):
    state = AgentState.open(agent, "w")
    state.record_goal("kept")
    log = agent / "state/events.jsonl"
    data = log.read_bytes()
    real = os.fsync

    def bad_fsync(fd):  # only the log's fsync fails (not the lease's)
        if os.fstat(fd).st_ino != os.stat(log).st_ino:
            return real(fd)
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", bad_fsync)
    with pytest.raises(LogError, match="Input/output error"):
        state.record_goal("lost")
    assert log.read_bytes() == data


def test_append_line_file_failure_leaves_the_file_whole(tmp_path, monkeypatch):
    path = tmp_path / "facts.jsonl"
    append_line_file(path, b'{"a":1}\n')
    _half_then_fail(monkeypatch)
    with pytest.raises(LogError):
        append_line_file(path, b'{"b":2222222222}\n')
    monkeypatch.undo()
    assert path.read_bytes() == b'{"a":1}\n'
    assert issubclass(LogError, GaspError)


def test_log_under_a_symlinked_directory_is_refused(agent, tmp_path):
    state = AgentState.open(agent, "w")
    state.record_goal("g")
    state.release()
    elsewhere = tmp_path / "elsewhere"
    (agent / "state").rename(elsewhere)
    (agent / "state").symlink_to(elsewhere)
    for use_snapshots in (True, False):
        with pytest.raises(LogError, match=r"^state/ \(holding state/events.jsonl\) is a "
                                           "symlink"):
            AgentState.open(agent, "w", use_snapshots=use_snapshots)


def test_record_refuses_once_the_log_directory_becomes_a_symlink(agent, tmp_path):
    state = AgentState.open(agent, "w")
    state.record_goal("g")
    elsewhere = tmp_path / "elsewhere"
    (agent / "state").rename(elsewhere)
    (agent / "state").symlink_to(elsewhere)
    data = (elsewhere / "events.jsonl").read_bytes()
    with pytest.raises(LogError, match="is a symlink"):
        state.record_goal("through the link")
    assert (elsewhere / "events.jsonl").read_bytes() == data


def test_fifo_log_is_refused(agent):
    log = agent / "state/events.jsonl"
    log.unlink()
    os.mkfifo(log)
    with pytest.raises(GaspError, match="not a regular file"):
        AgentState.open(agent, "w", use_snapshots=False)


def test_memory_location_comes_from_the_manifest(agent):
    md = agent / "AGENT.md"
    text = md.read_text()
    assert "locations" not in text
    md.write_text(text.replace("executor: .agent/config.toml\n",
                               "executor: .agent/config.toml\nlocations: {memory: mem2}\n", 1))
    state = AgentState.open(agent, "w")
    assert state.memory_rel == "mem2"
    goal = state.record_goal("g")
    facts = Facts(state)
    fid = facts.add("a fact", [goal])
    line = json.loads((agent / "mem2/facts.jsonl").read_text())
    assert line["id"] == fid
    assert facts.synthesize() == agent / "mem2/active_memory.md"


def test_snapshot_records_only_the_folded_lines(agent, monkeypatch):
    state = AgentState.open(agent, "w")
    state.record_goal("g")
    folded = state.store.line_count
    log = agent / "state/events.jsonl"
    real = state.store.read_bytes
    extra = log.read_bytes().splitlines(keepends=True)[-1]

    def racing_read():  # another writer appends between refresh and the read
        return real() + extra

    monkeypatch.setattr(state.store, "read_bytes", racing_read)
    rel = state.write_snapshot()
    doc = json.loads((agent / rel).read_text())
    assert doc["integrity"]["line_count"] == folded


def test_a_config_toml_number_of_5000_digits_is_one_error_line_for_the_runtime(agent):
    from git_gasp.base.agentconfig import read_config

    (agent / ".agent/config.toml").write_text("[policy]\nx = " + "9" * 5000 + "\n")
    with pytest.raises(GaspError, match=r"^\.agent/config\.toml does not parse: a number"):
        read_config(agent)
    proc = gasp(agent, "record", "goal", "--title", "t")
    assert proc.returncode == 1, out(proc)
    assert out(proc).strip().startswith("git gasp: error: .agent/config.toml does not parse")
