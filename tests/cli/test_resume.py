"""`git gasp resume`: the command line each agent gets, primed with the run's goal, its
recap and what is left open; started for real (a stand-in `codex` on PATH that sends
the SessionStart hook as Codex does), the new run records derived_from the old one
through the hand-off bound to the process; bad input is one line."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import sys
from pathlib import Path

import pytest

from git_gasp.adapters.agent_hook import handoff
from git_gasp.adapters.live import gasp_dir
from git_gasp.adapters.session_writer import run_id_for
from tests.testing.run import gasp, ok, out

pytestmark = pytest.mark.slow  # a run recorded through the CLI, then resumed

GOAL = "Make the retry reliable"
TASK = "cover the timeout path in CI"



@pytest.fixture
def first(agent) -> tuple[Path, str]:
    """A finished run with a goal, a failing eval and an open task."""
    goal = ok(agent, "record", "goal", "--title", GOAL)
    run = ok(agent, "run", "start", "--task", "claude-code session s1", "--goal", goal)
    ok(agent, "record", "eval", "--command", "pytest -q", "--status", "Failed")
    ok(agent, "record", "task", "--title", TASK, "--goal", goal)
    ok(agent, "run", "finish", "--outcome", "abandoned")
    return agent, run


def test_print_gives_each_agent_a_primed_command(first):
    repo, run = first
    line = ok(repo, "resume", run[:12], "--agent", "codex", "--print")
    argv = shlex.split(line)
    assert argv[0] == "codex" and len(argv) == 2
    primed = argv[1]
    assert primed.startswith(f"Resume run {run}: {GOAL}\n")
    assert f"- task: {TASK} [Open]" in primed and "- failing eval: `pytest -q`" in primed
    assert "## Who you are" in primed and "From `identity/" in primed
    assert f"`git gasp recap {run}`" in primed
    batch = shlex.split(ok(repo, "resume", run, "--agent", "codex", "--print",
                            "--non-interactive", "--", "--skip-git-repo-check"))
    assert batch[:3] == ["codex", "exec", "--skip-git-repo-check"] and batch[3] == primed
    for agent, head in (("claude-code", ["claude", "-p"]), ("gemini", ["gemini", "-p"]),
                        ("opencode", ["opencode", "run"])):
        got = shlex.split(ok(repo, "resume", run, "--agent", agent, "--print",
                              "--non-interactive"))
        assert got[:-1] == head and got[-1] == primed
    assert shlex.split(ok(repo, "resume", run, "--agent", "gemini", "--print"))[:2] == [
        "gemini", "-i"]
    # --print leaves the hand-off for the next session of that agent
    left = handoff.read(gasp_dir(repo), "codex")
    assert left["from_run"] == run and left["pid"] is None


FAKE_CODEX = """#!/bin/sh
printf '%s\\n' "$@" > {argv}
printf '{{"session_id":"s-resumed","cwd":"%s","hook_event_name":"%s","source":"startup"}}' \
  "$PWD" SessionStart | {hook} codex
"""


def test_resume_starts_the_agent_and_its_run_derives_from_the_old_one(first, tmp_path,
                                                                        monkeypatch):
    repo, run = first
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "codex"
    hook = Path(sys.executable).with_name("git-gasp-hook")
    fake.write_text(FAKE_CODEX.format(argv=tmp_path / "argv", hook=hook))
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    proc = gasp(repo, "resume", run, "--agent", "codex", "--non-interactive",
                "--", "--skip-git-repo-check")
    assert proc.returncode == 0, out(proc)
    argv = (tmp_path / "argv").read_text()
    assert argv.startswith(f"exec\n--skip-git-repo-check\nResume run {run}: {GOAL}\n")
    assert "note: codex's hooks are not installed here" in out(proc)
    ok(repo, "log", "-n", "1")  # records what the hook queued, as every command does
    graph = json.loads(ok(repo, "fold", "--json"))
    new = run_id_for("codex", "s-resumed")
    assert {"from": new, "rel": "derived_from", "to": run, "props": {}} in graph["relations"]
    assert handoff.read(gasp_dir(repo), "codex") is None  # taken
    assert f"  resumed in: {new}\n" in ok(repo, "recap", run)


@pytest.mark.parametrize("args, message", [
    (("run_nope", "--agent", "codex"), "no run 'run_nope'"),
    (("RUN", "--agent", "vim"), "--agent 'vim': not an agent git gasp can start"),
])
def test_bad_input_is_one_line(first, args, message):
    repo, run = first
    args = tuple(run if a == "RUN" else a for a in args)
    proc = gasp(repo, "resume", *args, "--print")
    err = proc.stderr.decode()
    assert proc.returncode != 0 and proc.stdout == b""
    assert err.startswith("git gasp: error: ") and message in err and err.count("\n") == 1


def test_a_missing_program_is_one_line(first, monkeypatch, tmp_path):
    repo, run = first
    bindir = tmp_path / "bin"  # git and git-gasp only: no gemini
    bindir.mkdir()
    (bindir / "git").symlink_to(shutil.which("git"))
    (bindir / "git-gasp").symlink_to(Path(sys.executable).with_name("git-gasp"))
    monkeypatch.setenv("PATH", str(bindir))
    proc = gasp(repo, "resume", run, "--agent", "gemini")
    err = proc.stderr.decode()
    assert proc.returncode == 1
    assert "git gasp: error: gemini is not on PATH" in err and err.count("\n") == 1
    assert handoff.read(gasp_dir(repo), "gemini") is None
