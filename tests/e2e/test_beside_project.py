"""Live sessions in a project of its own, the agent state beside it (issue #25's proof).

An existing project (history not made by git-gasp); `git gasp install`, then `git gasp
init --branch`; the agents' hooks installed in the project; a live Claude Code and a
live Codex session (the scripted local model of `servers.py`), whose first tool prints
~300 KB. The sessions are recorded on `gasp/state`: the working branch's history is the
project's own plus the agent's commit, no state file is in its tree or at its root,
`check` and `fold --json` from the project root read the state and pass, the patch
names the agent's commit, and no stored event line reaches 32 KiB.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.e2e import agents
from tests.e2e.test_live_sessions import _binary
from tests.testing.run import drained, gasp, git, out

pytestmark = pytest.mark.slow  # live agent sessions

STATE_NAMES = ("AGENT.md", "identity", "skills", "state", "memory", "journal", ".agent",
               "transcripts")


@pytest.fixture(scope="module")
def claude_bin() -> Path:
    return _binary(agents.CLAUDE_PKG, agents.claude_binary)


@pytest.fixture(scope="module")
def codex_bin() -> Path:
    return _binary(agents.CODEX_PKG, agents.codex_binary)


@pytest.fixture
def project(tmp_path) -> Path:
    repo = tmp_path / "app"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    (repo / "README.md").write_text("# app\n")
    git(repo, "add", "README.md")
    git(repo, "commit", "-qm", "the project's own first commit")
    for args in (("install",), ("init", "--branch")):
        proc = gasp(repo, *args)
        assert proc.returncode == 0, out(proc)
    return repo


def _check_beside(project: Path, session, before: list[str]) -> None:
    assert session.proc.returncode == 0, session.describe()
    drained(project)  # the hooks only queue (in the project's git dir): wait for the drain
    subjects = git(project, "log", "--format=%s", "main").splitlines()
    assert subjects == ["Fix add", *before], subjects
    tree = git(project, "ls-tree", "-r", "--name-only", "main").split()
    assert sorted(tree) == ["README.md", "calc.py", "test_calc.py"], tree
    assert not any((project / name).exists() for name in STATE_NAMES)
    state_log = git(project, "log", "--format=%B", "gasp/state")
    assert "Run-Id: run_" in state_log and "Outcome: promoted" in state_log, state_log
    check = gasp(project, "check")
    assert check.returncode == 0, out(check)
    fold = gasp(project, "fold", "--json")
    assert fold.returncode == 0, out(fold)
    nodes = json.loads(fold.stdout)["nodes"].values()
    fix = git(project, "rev-parse", "main").strip()
    (patch,) = [n for n in nodes if n["kind"] == "patch"]
    assert patch["props"]["references_commit"] == fix
    calls = [n for n in nodes if n["kind"] == "tool_call"]
    assert len(calls) == 7  # the noisy print and the six of the script
    state = Path(git(project, "config", "--get", "gasp.state").strip())
    common = Path(git(project, "rev-parse", "--path-format=absolute",
                      "--git-common-dir").strip())
    lines = (common / state / "state" / "events.jsonl").read_bytes().splitlines()
    assert max(map(len, lines)) < 32 * 1024
    assert b"\n".join(str(n).encode() for n in range(40000, 40100)) not in b"\n".join(lines)


def test_claude_code_session_is_recorded_beside_the_project(claude_bin, project, tmp_path):
    before = git(project, "log", "--format=%s").splitlines()
    proc = gasp(project, "adapt", "claude-code", "install", "--scope", "local")
    assert proc.returncode == 0, out(proc)
    assert git(project, "status", "--porcelain") == ""  # settings.local.json is excluded
    home = tmp_path / "agent-home"
    home.mkdir()
    session = agents.run_claude(claude_bin, project, home, noisy=True)
    _check_beside(project, session, before)


def test_codex_session_is_recorded_beside_the_project(codex_bin, project, tmp_path):
    before = git(project, "log", "--format=%s").splitlines()
    proc = gasp(project, "adapt", "codex", "install")
    assert proc.returncode == 0, out(proc)
    home = tmp_path / "agent-home"
    home.mkdir()
    session = agents.run_codex(codex_bin, project, home, noisy=True)
    _check_beside(project, session, before)
