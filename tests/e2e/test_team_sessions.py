"""A team shares one agent history (issue 41's proof): two clones of one project, a
bare remote between them on this machine, each with a live Claude Code session against
the scripted model, following README's "Your team" steps only (install once, `init
--branch` joins, `adapt claude-code install --scope local`, `sync`). Both sessions
arrive on both sides once each, `check` passes on both, `main` holds no state file on
either, and each run names the person who ran it (the clone's git identity)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.e2e import agents
from tests.e2e.test_live_sessions import _binary
from tests.testing.run import gasp, git, out

pytestmark = pytest.mark.slow

STATE_NAMES = ("AGENT.md", "identity", "skills", "state", "memory", "journal", ".agent",
               "transcripts", ".gitattributes")


@pytest.fixture(scope="module")
def claude_bin() -> Path:
    return _binary(agents.CLAUDE_PKG, agents.claude_binary)


def _ok(repo: Path, *args: str) -> str:
    proc = gasp(repo, *args)
    assert proc.returncode == 0, (args, out(proc))
    return out(proc)


def _person(repo: Path, name: str) -> None:
    """The clone's own git identity (the hermetic GIT_AUTHOR_* are dropped below)."""
    git(repo, "config", "user.name", name)
    git(repo, "config", "user.email", f"{name.lower()}@example.org")


def _runs(repo: Path) -> list[dict]:
    proc = gasp(repo, "fold", "--json")
    assert proc.returncode == 0, out(proc)
    graph = json.loads(proc.stdout)
    return [n for n in graph["nodes"].values() if n["kind"] == "run"]


def _session(claude_bin: Path, repo: Path, home: Path) -> None:
    session = agents.run_claude(claude_bin, repo, home)
    assert session.proc.returncode == 0, session.describe()
    _ok(repo, "status")  # a command that opens the state drains what the hooks queued


def _first_person(tmp_path: Path, monkeypatch) -> tuple[Path, Path]:
    """(a bare remote, Alice's new project: README.md written, origin the remote); each
    clone's git identity is its own (the hermetic GIT_AUTHOR_* are dropped)."""
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME",
                 "GIT_COMMITTER_EMAIL"):
        monkeypatch.delenv(name, raising=False)
    bare = tmp_path / "shared.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    alice = tmp_path / "alice"
    alice.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=alice, check=True)
    _person(alice, "Alice")
    (alice / "README.md").write_text("# app\n")
    git(alice, "remote", "add", "origin", str(bare))
    return bare, alice


def test_two_clones_share_one_history_through_a_bare_remote(claude_bin, tmp_path, monkeypatch):
    bare, alice = _first_person(tmp_path, monkeypatch)
    git(alice, "add", "README.md")
    git(alice, "commit", "-qm", "the project")
    git(alice, "push", "-q", "origin", "main")
    # the first person: README's "Your own project" steps, then sync
    _ok(alice, "install")
    _ok(alice, "init", "--branch")
    _ok(alice, "adapt", "claude-code", "install", "--scope", "local")
    _session(claude_bin, alice, tmp_path / "home-alice")
    git(alice, "push", "-q", "origin", "main")
    _ok(alice, "sync")
    # the teammate: README's "Your team" steps
    bob = tmp_path / "bob"
    git(tmp_path, "clone", "-q", str(bare), str(bob))
    _person(bob, "Bob")
    _ok(bob, "install")
    assert "joined agent" in _ok(bob, "init", "--branch")
    _ok(bob, "adapt", "claude-code", "install", "--scope", "local")
    git(bob, "reset", "-q", "--hard", "HEAD~1")  # the scripted session commits its fix again
    _session(claude_bin, bob, tmp_path / "home-bob")
    _ok(bob, "sync")
    _ok(alice, "sync")
    for repo in (alice, bob):
        runs = _runs(repo)
        assert len(runs) == 2 and len({r["id"] for r in runs}) == 2, runs
        assert sorted(r["props"]["metadata"].get("person") for r in runs) == ["Alice", "Bob"]
        assert all(r["props"]["status"] == "finished" for r in runs), runs
        check = gasp(repo, "check")
        assert check.returncode == 0, out(check)
        tree = git(repo, "ls-tree", "--name-only", "main").split()
        assert not set(tree) & set(STATE_NAMES), tree
        assert not any((repo / name).exists() for name in STATE_NAMES)
    assert git(alice, "rev-parse", "gasp/state") == git(bob, "rev-parse", "gasp/state")
    log = _ok(alice, "log")
    assert "(by Alice)" in log and "(by Bob)" in log, log


def test_a_clone_that_never_ran_init_keeps_its_session_until_it_does(claude_bin, tmp_path,
                                                                      monkeypatch):
    """Issue 41's third clone: the project's committed `.claude/settings.json` carries the
    hooks, the clone never ran `init`. Its session is held (redacted, in the git dir),
    the person is told once what to run, and after `init --branch` (joining) the session
    is in the log."""
    bare, alice = _first_person(tmp_path, monkeypatch)
    _ok(alice, "install")
    _ok(alice, "init", "--branch")
    _ok(alice, "adapt", "claude-code", "install")  # project scope: committed for the team
    git(alice, "add", "README.md", ".claude/settings.json")
    git(alice, "commit", "-qm", "the project, its agent hooks")
    git(alice, "push", "-q", "origin", "main")
    _ok(alice, "sync")
    carol = tmp_path / "carol"
    git(tmp_path, "clone", "-q", str(bare), str(carol))
    _person(carol, "Carol")
    session = agents.run_claude(claude_bin, carol, tmp_path / "home-carol")
    assert session.proc.returncode == 0, session.describe()
    assert session.transcript is not None, session.describe()
    lines = [json.loads(x) for x in session.transcript.read_text().splitlines() if x.strip()]
    told = [a["content"] for a in (x.get("attachment") or {} for x in lines)
            if a.get("type") == "hook_system_message"]  # what Claude Code shows the person
    assert len(told) == 1 and "run `git gasp init --branch`" in told[0], told
    held = sorted((carol / ".git" / "gasp" / "queue" / "held").iterdir())
    assert held and not (carol / "state").exists()
    joined = _ok(carol, "init", "--branch")
    assert "joined agent" in joined and "hook event(s) held while the project had no state" \
        in joined, joined
    runs = _runs(carol)
    assert [r["props"]["metadata"].get("person") for r in runs] == ["Carol"], runs
    assert gasp(carol, "check").returncode == 0
    tree = git(carol, "ls-tree", "--name-only", "main").split()
    assert not set(tree) & set(STATE_NAMES), tree
