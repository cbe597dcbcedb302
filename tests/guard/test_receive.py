"""The server's guard: `git gasp install-hooks --server` in a bare repository installs
pre-receive, which refuses a push from a client without hooks that edits the log in
place, drops a line, force-pushes history away or deletes a protected branch, with one
line per refusal naming the commit and path; the remote is left unchanged. Also over
`git daemon` on loopback (a real network protocol)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.testing.daemon import git_daemon
from tests.testing.events import goal_pair
from tests.testing.run import gasp, git, out

pytestmark = pytest.mark.slow  # real pushes

LOG = "state/events.jsonl"


def push(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "push", "-q", *args], cwd=repo, capture_output=True)


def head_of(remote: Path, ref: str = "main") -> str:
    return git(remote, "rev-parse", ref).strip()


@pytest.fixture
def served(agent, tmp_path):
    """(bare remote with our pre-receive, a clone without hooks)."""
    return serve(agent, tmp_path)


def serve(agent: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A bare remote with our pre-receive holding the agent's history and two goals,
    and a clone of it without hooks."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    proc = gasp(remote, "install-hooks", "--server")
    assert proc.returncode == 0, out(proc)
    assert (remote / "hooks" / "pre-receive").stat().st_mode & 0o111
    git(agent, "remote", "add", "origin", str(remote))
    with open(agent / LOG, "ab") as fh:
        fh.write(goal_pair(1) + goal_pair(2))
    git(agent, "add", "-A")
    git(agent, "commit", "-q", "-m", "two goals")
    first = push(agent, "origin", "main")
    assert first.returncode == 0, first.stderr
    rogue = tmp_path / "rogue"
    git(tmp_path, "clone", "-q", str(remote), str(rogue))
    assert not (rogue / ".git" / "hooks" / "pre-commit").exists()
    return remote, rogue


def commit(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def refused(proc: subprocess.CompletedProcess) -> list[str]:
    assert proc.returncode != 0
    return [line for line in proc.stderr.decode().splitlines() if "git gasp: refused" in line]


def test_an_append_goes_in(served):
    remote, rogue = served
    with open(rogue / LOG, "ab") as fh:
        fh.write(goal_pair(3))
    sha = commit(rogue, "three")
    assert push(rogue, "origin", "main").returncode == 0
    assert head_of(remote) == sha


def test_an_in_place_edit_is_refused_naming_commit_and_path(served):
    remote, rogue = served
    before = head_of(remote)
    log = rogue / LOG
    log.write_bytes(log.read_bytes().replace(b"goal 1", b"goal X"))
    bad = commit(rogue, "rewrite")
    lines = refused(push(rogue, "origin", "main"))
    assert len(lines) == 1 and bad[:12] in lines[0] and LOG in lines[0], lines
    assert head_of(remote) == before


def test_a_dropped_line_is_refused(served):
    remote, rogue = served
    before = head_of(remote)
    log = rogue / LOG
    log.write_bytes(b"".join(log.read_bytes().splitlines(keepends=True)[:-1]))
    commit(rogue, "drop")
    assert refused(push(rogue, "origin", "main"))
    assert head_of(remote) == before


def test_a_force_push_that_drops_history_is_refused(served):
    remote, rogue = served
    with open(rogue / LOG, "ab") as fh:
        fh.write(goal_pair(3))
    commit(rogue, "three")
    assert push(rogue, "origin", "main").returncode == 0
    kept = head_of(remote)
    git(rogue, "reset", "-q", "--hard", "HEAD~1")
    with open(rogue / LOG, "ab") as fh:
        fh.write(goal_pair(4))
    commit(rogue, "another four")  # fine against its parent, but drops goal 3's lines
    lines = refused(push(rogue, "-f", "origin", "main"))
    assert any("forced update drops lines" in line for line in lines), lines
    assert head_of(remote) == kept


def test_deleting_a_protected_branch_is_refused_and_tags_are_free(served):
    remote, rogue = served
    assert push(rogue, "origin", "main:work").returncode == 0
    assert refused(push(rogue, "origin", ":work"))
    assert head_of(remote, "work")
    assert push(rogue, "origin", "main:refs/tags/v1").returncode == 0
    assert push(rogue, "origin", ":refs/tags/v1").returncode == 0


def test_an_existing_pre_receive_keeps_running_first(agent, tmp_path):
    remote = tmp_path / "r.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    seen = tmp_path / "seen.txt"
    hook = remote / "hooks" / "pre-receive"
    hook.write_text(f"#!/bin/sh\ncat > {seen}\n")
    hook.chmod(0o755)
    assert gasp(remote, "install-hooks", "--server").returncode == 0
    assert (remote / "hooks" / "pre-receive.legacy").exists()
    git(agent, "remote", "add", "origin", str(remote))
    assert push(agent, "origin", "main").returncode == 0
    assert "refs/heads/main" in seen.read_text()
    assert gasp(remote, "install-hooks", "--server", "--uninstall").returncode == 0
    assert hook.read_text().startswith("#!/bin/sh\ncat")


def test_server_install_refuses_a_work_tree(agent):
    proc = gasp(agent, "install-hooks", "--server")
    assert proc.returncode == 1 and "not a bare repository" in proc.stderr.decode()


@pytest.mark.skipif(shutil.which("git") is None, reason="no git")
def test_over_git_daemon_on_loopback(served, tmp_path):
    remote, rogue = served
    with git_daemon(tmp_path) as base:
        url = base + "remote.git"
        before = head_of(remote)
        log = rogue / LOG
        log.write_bytes(log.read_bytes().replace(b"goal 2", b"goal Y"))
        bad = commit(rogue, "rewrite")
        lines = refused(push(rogue, url, "main"))
        assert lines and bad[:12] in lines[0], lines
        assert head_of(remote) == before
        with open(rogue / LOG, "wb") as fh:
            fh.write(subprocess.run(["git", "show", f"{before}:{LOG}"], cwd=rogue,
                                    capture_output=True, check=True).stdout + goal_pair(5))
        git(rogue, "reset", "-q", "--soft", before)
        good = commit(rogue, "five")
        assert push(rogue, url, "main").returncode == 0
        assert head_of(remote) == good
