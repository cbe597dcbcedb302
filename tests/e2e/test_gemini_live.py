"""A live Gemini CLI session recorded through git-gasp's hooks, against the scripted model.

`git gasp adapt gemini install` in a fresh `git gasp init` repo, then one `gemini -p`
session (``GOOGLE_GEMINI_BASE_URL`` at ``servers.GeminiHandler``) writes a bug, fails
a test, fixes it and commits: the hooks alone must leave a conformant, committed run
with the tool calls, one model call per request naming the model, and the lifted
spine (goal, eval Failed, failure, eval Passed, patch pinned to the commit, decision).
Without npm (or the registry) the test skips, saying why.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_gasp.adapters.session_writer import run_id_for
from tests.e2e import agents
from tests.e2e.servers import GEMINI_MODEL, PROMPT
from tests.testing.run import drained, gasp, git, out

pytestmark = pytest.mark.slow  # a live agent session


@pytest.fixture(scope="session")
def gemini_bin() -> Path:
    prefix, why = agents.npm_install(agents.GEMINI_PKG)
    if prefix is None:
        pytest.skip(f"end-to-end test needs {agents.GEMINI_PKG}: {why}")
    binary = agents.gemini_binary(prefix)
    if binary is None:
        pytest.skip(f"{agents.GEMINI_PKG} installed but its gemini script was not found")
    return binary


def _events(repo: Path) -> list[dict]:
    return [json.loads(line) for line in
            (repo / "state/events.jsonl").read_text().splitlines() if line.strip()]


def test_gemini_hooks_record_the_session(gemini_bin, tmp_path):
    proc = gasp(tmp_path, "init", "bot")
    assert proc.returncode == 0, out(proc)
    repo = tmp_path / "bot"
    proc = gasp(repo, "adapt", "gemini", "install")
    assert proc.returncode == 0, out(proc)
    session = agents.run_gemini(gemini_bin, repo, tmp_path / "agent-home")
    assert session.proc.returncode == 0, session.describe()
    drained(repo)
    adapter_log = Path(git(repo, "rev-parse", "--absolute-git-dir").strip()) / "gasp/adapter.log"
    log_text = adapter_log.read_text()
    assert "error" not in log_text.lower() and "failed" not in log_text, log_text
    check = gasp(repo, "check")
    assert check.returncode == 0, out(check) + log_text
    fix = git(repo, "log", "--format=%H", "--grep=^Fix add$").strip()
    assert fix, git(repo, "log", "--oneline")

    events = _events(repo)
    kinds = [e["kind"] for e in events]
    sid = next(e["payload"]["metadata"]["source"]["session_id"] for e in events
               if e["kind"] == "tool.called")
    run_id = run_id_for("gemini", sid)
    tools = [e["payload"]["tool"] for e in events if e["kind"] == "tool.called"]
    assert tools == ["write_file", "write_file", "run_shell_command", "replace",
                     "run_shell_command", "run_shell_command"]
    assert kinds.count("tool.finished") == 6
    models = [e["payload"] for e in events if e["kind"] == "model.called"]
    posts = [r for r in session.requests if r[0] == "POST" and "GenerateContent" in r[1]]
    assert len(models) == 7 and len(posts) >= 7, (len(models), len(posts))
    assert {m["model"] for m in models} == {GEMINI_MODEL}
    assert {m["provider"] for m in models} == {"google"}
    finished = [e["payload"] for e in events if e["kind"] == "model.finished"]
    assert len(finished) == 7 and all(f["usage"]["totalTokenCount"] == 15 for f in finished)
    assert finished[-1]["output_summary"] == "Fixed add() and committed; the test passes."
    evals = [e["payload"]["status"] for e in events if e["kind"] == "eval.finished"]
    assert evals == ["Failed", "Passed"]

    graph = json.loads(gasp(repo, "fold", "--json").stdout)
    nodes = list(graph["nodes"].values())
    (run,) = [n for n in nodes if n["kind"] == "run"]
    assert run["id"] == run_id
    assert run["props"]["status"] == "finished" and run["props"]["outcome"] == "promoted"
    assert all(n["props"]["status"] == "succeeded" for n in nodes if n["kind"] == "model_call")
    (goal,) = [n for n in nodes if n["kind"] == "goal"]
    assert goal["props"]["title"] == PROMPT
    (patch,) = [n for n in nodes if n["kind"] == "patch"]
    assert patch["props"]["references_commit"] == fix and patch["props"]["status"] == "Promoted"
    assert [n["kind"] for n in nodes].count("decision") == 1
    message = git(repo, "log", "-1", "--format=%B")
    assert f"Run-Id: {run_id}" in message and "Outcome: promoted" in message, log_text
    assert git(repo, "status", "--porcelain", "--", "state") == ""
