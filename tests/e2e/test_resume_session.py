"""A live Claude Code run resumed in a live Codex session (both against the scripted
model, their hooks installed by `git gasp adapt … install`): `git gasp resume RUN
--agent codex --print` gives the Codex command whose primed prompt holds the run's goal
and its open task; run as printed, the Codex session reaches the model with that
context and its hook-recorded run records derived_from the Claude Code run. Skips
without the CLIs (npm), as the other live tests do."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from git_gasp.adapters import claude_code, codex
from git_gasp.adapters.session_writer import run_id_for
from tests.e2e import agents
from tests.e2e.servers import PROMPT, CodexHandler, ModelServer
from tests.testing.run import drained, gasp, ok, out

pytestmark = pytest.mark.slow  # two live agent sessions

TASK = "Cover add() with a negative-number test"
REPLY = "Picked up the run: the negative-number test comes next."



@pytest.fixture(scope="module")
def claude_bin() -> Path:
    return agents.installed(agents.CLAUDE_PKG, agents.claude_binary)


@pytest.fixture(scope="module")
def codex_bin() -> Path:
    return agents.installed(agents.CODEX_PKG, agents.codex_binary)


def test_a_claude_code_run_resumed_in_codex(claude_bin, codex_bin, tmp_path):
    assert gasp(tmp_path, "init", "bot").returncode == 0
    repo = tmp_path / "bot"
    home = tmp_path / "agent-home"
    home.mkdir()
    ok(repo, "adapt", "claude-code", "install")
    ok(repo, "adapt", "codex", "install")
    # 1. the first run: a live Claude Code session, recorded by its hooks
    session = agents.run_claude(claude_bin, repo, home)
    assert session.proc.returncode == 0 and session.transcript, session.describe()
    drained(repo)
    first = run_id_for("claude-code",
                       claude_code.read_transcript(session.transcript).session.session_id)
    graph = json.loads(ok(repo, "fold", "--json"))
    goal = graph["nodes"][first]["props"]["goal_id"]
    assert graph["nodes"][goal]["props"]["title"] == PROMPT
    ok(repo, "record", "task", "--title", TASK, "--goal", goal)  # left for the next one
    # 2. the Codex command that continues it, as a person would copy it
    line = ok(repo, "resume", first, "--agent", "codex", "--print", "--non-interactive",
               "--", "--dangerously-bypass-hook-trust", "--skip-git-repo-check")
    argv = shlex.split(line)
    assert argv[:2] == ["codex", "exec"]
    primed = argv[-1]
    assert primed.startswith(f"Resume run {first}: {PROMPT}\n")
    assert f"- task: {TASK} [Open]" in primed
    assert f"`git gasp recap {first}`" in primed and "transcripts/" in primed
    # 3. run as printed (codex found on PATH), against the scripted model
    with ModelServer(CodexHandler, [REPLY], str(repo)) as server:
        codex_home = agents.codex_config(home, repo, server.port)
        env = agents.agent_env(home)
        env.update(CODEX_HOME=str(codex_home), MOCK_API_KEY="test-key",
                   PATH=f"{codex_bin.parent}{os.pathsep}{env['PATH']}")
        proc = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True,
                              timeout=240, stdin=subprocess.DEVNULL, check=False)
        requests = list(server.requests)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    asked = json.dumps([body for method, _path, body in requests if method == "POST"])
    assert TASK in asked and PROMPT in asked  # the primed context reached the model
    drained(repo)
    rollouts = sorted((codex_home / "sessions").glob("**/rollout-*.jsonl*"))
    assert rollouts
    second = run_id_for("codex", codex.read_rollout(rollouts[-1]).session.session_id)
    graph = json.loads(ok(repo, "fold", "--json"))
    assert second in graph["nodes"], sorted(n for n in graph["nodes"] if n.startswith("run_"))
    assert {"from": second, "rel": "derived_from", "to": first, "props": {}} in graph[
        "relations"]
    assert graph["nodes"][second]["props"]["derived_from"] == first
    assert f"  resumed from: {first}\n" in ok(repo, "recap", second)
    assert f"  resumed in: {second}\n" in ok(repo, "recap", first)
    lineage = json.loads(ok(repo, "lineage", second, "--json"))
    assert first in json.dumps(lineage)
    check = gasp(repo, "check")
    assert check.returncode == 0, out(check)
