"""Nothing is dropped (issue 41 item 3): an agent hook in a project whose repository has
no state yet keeps the payloads, redacted and bounded, in the git dir, tells the person
once per session what to run, and `git gasp init --branch` (new or joining) records
them. Driven through the installed `git-gasp-hook` and `git gasp`."""

from __future__ import annotations

import json
import stat
import subprocess
from pathlib import Path

import pytest

from git_gasp.adapters.agent_hook import held as hook_held
from git_gasp.adapters.agent_hook.queue_files import enqueue, held, queued
from git_gasp.adapters.live import drain_pending
from tests.testing.repos import make_project, shared_project
from tests.testing.run import gasp, git, git_gasp_exe, out

# replays sessions through the installed hook and drainer, then init --branch
pytestmark = pytest.mark.slow

HOOK = str(Path(git_gasp_exe()[0]).with_name("git-gasp-hook"))
SECRET = "AKIAIOSFODNN7EXAMPLE"


def _hook(project: Path, agent: str, event: str, session: str = "s1", **extra) -> bytes:
    """Run the installed hook as the agent does; its stdout (the hook always exits 0)."""
    payload = dict(hook_event_name=event, cwd=str(project), session_id=session,
                   transcript_path=str(project / ".no-transcript.jsonl"), **extra)
    proc = subprocess.run([HOOK, agent], cwd=project, input=json.dumps(payload).encode(),
                          capture_output=True, timeout=60)
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    return proc.stdout


def _session(project: Path, agent: str = "claude-code") -> list[bytes]:
    """A short session's hook outputs: start, a prompt holding a secret, a compaction's
    second SessionStart, its end."""
    said = [_hook(project, agent, "SessionStart", source="startup")]
    said.append(_hook(project, agent, "UserPromptSubmit", prompt=f"deploy with {SECRET}"))
    said.append(_hook(project, agent, "SessionStart", source="compact"))
    said.append(_hook(project, agent, "SessionEnd", reason="exit"))
    return said


def _gdir(project: Path) -> str:
    return str(project / ".git" / "gasp")


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_a_project_without_state_holds_the_session_and_says_once_what_to_run(
        tmp_path: Path, agent: str) -> None:
    project = make_project(tmp_path / "app")
    said = _session(project, agent)
    message = json.loads(said[0])
    assert list(message) == ["systemMessage"] and said[0].count(b"\n") == 1
    assert "no agent state" in message["systemMessage"]
    assert "`git gasp init --branch`" in message["systemMessage"]
    assert said[1:] == [b"", b"", b""]  # once per session, compaction included
    entries = held(_gdir(project))
    assert len(entries) == 4 and not queued(_gdir(project))
    for entry in entries:
        assert stat.S_IMODE(Path(entry).stat().st_mode) == 0o600
        assert SECRET.encode() not in Path(entry).read_bytes()  # redacted at rest
    assert b"[REDACTED:" in Path(entries[1]).read_bytes()
    assert git(project, "status", "--porcelain") == ""

    proc = gasp(project, "init", "--branch")
    assert proc.returncode == 0, out(proc)
    assert "recorded 4 hook event(s) held while the project had no state" in out(proc)
    assert not held(_gdir(project)) and not queued(_gdir(project))
    log = out(gasp(project, "log", "--json"))
    assert f"run_{agent}.s1" in log and "deploy with [REDACTED:" in log
    assert SECRET not in log
    assert "AGENT.md" not in git(project, "ls-tree", "--name-only", "main")
    assert _hook(project, agent, "SessionStart", session="s2", source="startup") == b""


def test_a_projects_own_agent_md_is_no_state_too(tmp_path: Path) -> None:
    """Amp keeps its instructions in AGENT.md: payloads are held, not queued for it."""
    project = make_project(tmp_path / "app")
    (project / "AGENT.md").write_text("# Agent instructions\n\nRun the tests first.\n")
    said = _hook(project, "claude-code", "SessionStart", source="startup")
    assert "git gasp init --branch" in json.loads(said)["systemMessage"]
    assert len(held(_gdir(project))) == 1


def test_a_teammates_clone_records_its_held_session_when_it_joins(tmp_path: Path) -> None:
    """The third clone of issue 41: committed hooks, no `init`; `init --branch` joins the
    remote's state and records the session in it."""
    _alice, bare = shared_project(tmp_path)
    carol = tmp_path / "carol"
    git(tmp_path, "clone", "-q", str(bare), str(carol))
    said = _session(carol)
    assert "git gasp init --branch" in json.loads(said[0])["systemMessage"]
    proc = gasp(carol, "init", "--branch")
    assert proc.returncode == 0, out(proc)
    assert "joined agent" in out(proc) and "recorded 4 hook event(s)" in out(proc)
    log = out(gasp(carol, "log", "--json"))
    assert "run_claude-code.s1" in log and "alice's run" in log


def test_the_held_queue_keeps_the_oldest_within_its_caps(tmp_path: Path, monkeypatch) -> None:
    project = make_project(tmp_path / "app")
    gdir = _gdir(project)
    monkeypatch.setattr(hook_held, "HELD_MAX_ENTRIES", 3)
    names = []
    for i in range(5):
        payload = {"hook_event_name": "PreToolUse", "session_id": "s", "cwd": str(project),
                   "tool_name": "Bash", "tool_input": {"command": f"echo {i}"}}
        names.append(Path(enqueue(gdir, "claude-code", json.dumps(payload).encode())).name)
    drain_pending(project)
    assert [Path(p).name for p in held(gdir)] == names[:3]
    assert not queued(gdir)
    log = (Path(gdir) / "adapter.log").read_text()
    assert "3 hook payload(s) held" in log and "2 dropped: the held queue is full" in log
    monkeypatch.setattr(hook_held, "HELD_MAX_BYTES", 0)
    enqueue(gdir, "claude-code", b'{"hook_event_name": "Stop", "session_id": "s"}')
    drain_pending(project)
    assert len(held(gdir)) == 3 and not queued(gdir)
    assert "0 hook payload(s) held (redacted) in queue/held until `git gasp init --branch`, " \
           "3 in all; 1 dropped" in (Path(gdir) / "adapter.log").read_text()


def test_an_entry_that_is_not_json_is_set_aside_not_held(tmp_path: Path) -> None:
    """Nothing that cannot be redacted waits in the held queue; doctor reports it."""
    project = make_project(tmp_path / "app")
    gdir = _gdir(project)
    enqueue(gdir, "claude-code", b"not json " + SECRET.encode())
    drain_pending(project)
    assert not held(gdir) and not queued(gdir)
    assert (Path(gdir) / "queue" / "failed").is_dir()
    assert "not understood" in (Path(gdir) / "adapter.log").read_text()
