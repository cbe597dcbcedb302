"""A session whose boundary commit fails (no git identity, say): the SessionEnd hook
says so on stderr, where the agent shows hook output, and `git gasp doctor` reports the
run with the fix until a commit carries its Run-Id."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from git_gasp.adapters.session_writer import run_id_for
from tests.testing.run import gasp, git, out

IDENTITY = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME",
            "GIT_COMMITTER_EMAIL", "EMAIL")


def _hook(repo: Path, payload: dict, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "gasp", "adapt", "hook", "--agent", "claude-code"],
                          cwd=repo, input=json.dumps(payload).encode(), capture_output=True,
                          env=env)


@pytest.mark.slow  # over half a second: out of the fast loop
def test_a_failed_session_commit_is_said_by_the_hook_and_reported_by_doctor(tmp_path):
    proc = gasp(tmp_path, "init", "bot")
    assert proc.returncode == 0, out(proc)
    repo = tmp_path / "bot"
    git(repo, "config", "user.useConfigOnly", "true")  # no identity may be guessed
    no_identity = {k: v for k, v in os.environ.items() if k not in IDENTITY}
    session = {"session_id": "s-noid", "cwd": str(repo)}
    for event in ("SessionStart", "UserPromptSubmit"):
        assert _hook(repo, dict(session, hook_event_name=event, prompt="fix it"),
                     no_identity).returncode == 0
    head = git(repo, "rev-parse", "HEAD").strip()
    end = _hook(repo, dict(session, hook_event_name="SessionEnd", reason="exit"), no_identity)
    run_id = run_id_for("claude-code", "s-noid")
    assert end.returncode == 0  # a hook never fails the agent
    err = end.stderr.decode()
    assert f"{run_id} finished" in err and "not committed" in err and "git gasp doctor" in err
    assert git(repo, "rev-parse", "HEAD").strip() == head  # nothing committed

    doctor = gasp(repo, "doctor", "--json")
    findings = json.loads(doctor.stdout)
    (failed,) = [f for f in findings if "boundary commit" in f["what"]]
    assert failed["level"] == "error" and run_id in failed["what"]
    assert "not committed" in failed["what"] and "email" in failed["what"]
    assert failed["fix"].startswith("set your git identity first")
    assert f"git gasp commit-run --run {run_id}" in failed["fix"]
    assert doctor.returncode != 0

    # the fix, as doctor words it: afterwards doctor says nothing of it
    git(repo, "config", "user.name", "Fixed Me")
    git(repo, "config", "user.email", "fixed@example.com")
    fixed = gasp(repo, "commit-run", "--run", run_id, "--outcome", "finished")
    assert fixed.returncode == 0, out(fixed)
    assert f"Run-Id: {run_id}" in git(repo, "log", "-1", "--format=%B")
    again = json.loads(gasp(repo, "doctor", "--json").stdout)
    assert not [f for f in again if "boundary commit" in f["what"]]
