"""The server hook behind a real hosting layer: gitolite3 over OpenSSH on 127.0.0.1, our
pre-receive installed as gitolite documents a repo-specific hook
(`tests/testing/gitolite.py`). The same pushes, played against it and against a plain
bare remote behind `git daemon`, are accepted and refused alike, with the same lines."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.testing import gitolite
from tests.testing.daemon import git_daemon
from tests.testing.events import goal_pair
from tests.testing.run import gasp, git, out

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(gitolite.missing() is not None,
                                 reason=str(gitolite.missing()))]

LOG = "state/events.jsonl"
# (what is pushed, accepted?) in the order `play` makes them
EXPECTED = [("an append", True), ("an in-place edit", False), ("a dropped line", False),
            ("a force push dropping history", False), ("a new branch", True),
            ("deleting that protected branch", False), ("a tag", True),
            ("deleting the tag", True), ("a recovery ref", True),
            ("deleting the recovery ref", True)]


def _push(repo: Path, env: dict, *args: str) -> tuple[bool, list[str]]:
    proc = subprocess.run(["git", "push", *args], cwd=repo, env=env, capture_output=True)
    said = [re.sub(r"\b[0-9a-f]{12,64}\b", "<sha>", line.split("git gasp:", 1)[1].strip())
            for line in proc.stderr.decode(errors="replace").splitlines()
            if "git gasp:" in line]
    return proc.returncode == 0, said


def _commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", message)


def play(url: str, clone: Path, env: dict) -> list[tuple[str, bool, list[str]]]:
    """Clone `url` to `clone` (no hooks) and make the pushes `EXPECTED` names."""
    subprocess.run(["git", "clone", "-q", url, str(clone)], env=env, check=True)
    results = []

    def push(what: str, *args: str) -> None:
        results.append((what, *_push(clone, env, *args)))

    def back() -> None:
        git(clone, "reset", "-q", "--hard", "origin/main")

    log = clone / LOG
    with open(log, "ab") as fh:
        fh.write(goal_pair(3))
    _commit(clone, "three")
    push("an append", "origin", "main")
    git(clone, "fetch", "-q", "origin")
    log.write_bytes(log.read_bytes().replace(b"goal 1", b"goal X"))
    _commit(clone, "rewrite")
    push("an in-place edit", "origin", "main")
    back()
    log.write_bytes(b"".join(log.read_bytes().splitlines(keepends=True)[:-1]))
    _commit(clone, "drop")
    push("a dropped line", "origin", "main")
    back()
    git(clone, "reset", "-q", "--hard", "HEAD~1")
    with open(log, "ab") as fh:
        fh.write(goal_pair(4))
    _commit(clone, "another four")
    push("a force push dropping history", "-f", "origin", "main")
    back()
    push("a new branch", "origin", "main:work")
    push("deleting that protected branch", "origin", ":work")
    push("a tag", "origin", "main:refs/tags/v1")
    push("deleting the tag", "origin", ":refs/tags/v1")
    push("a recovery ref", "origin", "main:refs/gasp/recovery/tester/run_x")
    push("deleting the recovery ref", "origin", ":refs/gasp/recovery/tester/run_x")
    return results


def test_gitolite_over_ssh_refuses_and_accepts_as_git_daemon_does(agent, tmp_path,
                                                                  monkeypatch):
    with open(agent / LOG, "ab") as fh:
        fh.write(goal_pair(1) + goal_pair(2))
    _commit(agent, "two goals")
    plain = tmp_path / "served" / "plain.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(plain))
    proc = gasp(plain, "install-hooks", "--server", "--check")
    assert proc.returncode == 0, out(proc)
    git(agent, "push", "-q", str(plain), "main")
    with gitolite.gitolite_server(tmp_path / "gitolite", plain / "hooks" / "pre-receive") \
            as server:
        hosted = server.add_repo("agent")
        assert (hosted / "hooks" / "pre-receive.h00-git-gasp").exists()
        monkeypatch.setenv("GIT_SSH_COMMAND", server.ssh_command)  # every git below
        env = dict(os.environ)
        first = subprocess.run(["git", "push", "-q", server.url("agent"), "main"], cwd=agent,
                               env=env, capture_output=True)
        assert first.returncode == 0, first.stderr
        over_ssh = play(server.url("agent"), tmp_path / "via-ssh", env)
        with git_daemon(tmp_path / "served") as base:
            over_daemon = play(base + "plain.git", tmp_path / "via-daemon", env)
        main_ssh = git(hosted, "rev-parse", "main").strip()
    assert [(w, ok) for w, ok, _ in over_ssh] == EXPECTED, over_ssh
    assert over_ssh == over_daemon
    refusals = {w: said for w, ok, said in over_ssh if not ok}
    assert all(any(line.startswith("refused refs/heads/") for line in said)
               for said in refusals.values()), refusals
    assert any("forced update drops lines" in line
               for line in refusals["a force push dropping history"])
    # each refused push left the hosted branch at the accepted append
    assert main_ssh == git(tmp_path / "via-ssh", "rev-parse", "origin/main").strip()
    assert git(plain, "rev-parse", "main").strip() == git(
        tmp_path / "via-daemon", "rev-parse", "origin/main").strip()
