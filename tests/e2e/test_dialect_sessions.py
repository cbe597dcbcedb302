"""Live sessions of the agents adapted through their dialects, recorded by git-gasp's
hooks against scripted models: Gemini CLI (``GOOGLE_GEMINI_BASE_URL`` at
``servers.GeminiHandler``) and Qwen Code (``OPENAI_BASE_URL`` at
``servers.ChatHandler``).

`git gasp adapt AGENT install` in a fresh `git gasp init` repo, then one headless
session writes a bug, fails a test, fixes it and commits: the hooks alone must leave a
conformant, committed run with the tool calls, one model call per model response naming
the model, and the lifted spine (goal, eval Failed, failure, eval Passed, patch pinned
to the commit, decision). Qwen Code sends no SessionEnd in a headless run: `adapt
qwen-code reconcile` closes its run, as the turn its transcript ends on says.
Without npm (or the registry) the tests skip, saying why.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_gasp.adapters.session_writer import PROVIDERS, run_id_for
from tests.e2e import agents
from tests.e2e.servers import GEMINI_MODEL, PROMPT, QWEN_MODEL
from tests.testing.run import drained, gasp, git, out

pytestmark = pytest.mark.slow  # live agent sessions


@pytest.fixture(scope="session")
def gemini_bin() -> Path:
    return agents.installed(agents.GEMINI_PKG, agents.gemini_binary)


@pytest.fixture(scope="session")
def qwen_bin() -> Path:
    return agents.installed(agents.QWEN_PKG, agents.qwen_binary)


def _installed(tmp_path: Path, agent: str) -> Path:
    proc = gasp(tmp_path, "init", "bot")
    assert proc.returncode == 0, out(proc)
    repo = tmp_path / "bot"
    proc = gasp(repo, "adapt", agent, "install")
    assert proc.returncode == 0, out(proc)
    return repo


def _check_recorded(repo: Path, agent: str, tools: list[str], model: str) -> list[dict]:
    """The hooks alone made a conformant, committed run: the tool calls, the model
    calls naming `model`, the lifted spine. Returns the model.finished payloads."""
    drained(repo)
    adapter_log = Path(git(repo, "rev-parse", "--absolute-git-dir").strip()) / "gasp/adapter.log"
    log_text = adapter_log.read_text()
    assert "error" not in log_text.lower() and "failed" not in log_text, log_text
    check = gasp(repo, "check")
    assert check.returncode == 0, out(check) + log_text
    fix = git(repo, "log", "--format=%H", "--grep=^Fix add$").strip()
    assert fix, git(repo, "log", "--oneline")
    events = [json.loads(line) for line in
              (repo / "state/events.jsonl").read_text().splitlines() if line.strip()]
    kinds = [e["kind"] for e in events]
    sid = next(e["payload"]["metadata"]["source"]["session_id"] for e in events
               if e["kind"] == "tool.called")
    run_id = run_id_for(agent, sid)
    assert [e["payload"]["tool"] for e in events if e["kind"] == "tool.called"] == tools
    assert kinds.count("tool.finished") == len(tools)
    models = [e["payload"] for e in events if e["kind"] == "model.called"]
    assert len(models) == len(tools) + 1, kinds
    assert {m["model"] for m in models} == {model}
    assert {m["provider"] for m in models} == {PROVIDERS[agent]}  # the model's vendor
    finished = [e["payload"] for e in events if e["kind"] == "model.finished"]
    assert len(finished) == len(models) and all(f["usage"] for f in finished)
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
    return finished


def test_gemini_hooks_record_the_session(gemini_bin, tmp_path):
    repo = _installed(tmp_path, "gemini")
    session = agents.run_gemini(gemini_bin, repo, tmp_path / "agent-home")
    assert session.proc.returncode == 0, session.describe()
    posts = [r for r in session.requests if r[0] == "POST" and "GenerateContent" in r[1]]
    assert len(posts) >= 7
    finished = _check_recorded(repo, "gemini", [
        "write_file", "write_file", "run_shell_command", "replace", "run_shell_command",
        "run_shell_command"], GEMINI_MODEL)
    assert all(f["usage"]["totalTokenCount"] == 15 for f in finished)


def test_qwen_code_hooks_record_the_session(qwen_bin, tmp_path):
    repo = _installed(tmp_path, "qwen-code")
    session = agents.run_qwen(qwen_bin, repo, tmp_path / "agent-home")
    assert session.proc.returncode == 0, session.describe()
    assert session.transcript is not None, session.describe()
    proc = gasp(repo, "adapt", "qwen-code", "reconcile")  # headless: no SessionEnd
    assert proc.returncode == 0 and "closed run_qwen-code." in out(proc), out(proc)
    finished = _check_recorded(repo, "qwen-code", [
        "write_file", "write_file", "run_shell_command", "edit", "run_shell_command",
        "run_shell_command"], QWEN_MODEL)
    assert [f["stop_reason"] for f in finished] == ["tool_calls"] * 6 + ["stop"]


def test_two_agents_record_one_history(gemini_bin, qwen_bin, tmp_path):
    """A team whose members use different agents keeps one history: a Gemini CLI
    session and a Qwen Code session in one project, each installed beside the other,
    are two runs of one conformant log that fold together."""
    repo = _installed(tmp_path, "gemini")
    proc = gasp(repo, "adapt", "qwen-code", "install")
    assert proc.returncode == 0, out(proc)
    gemini = agents.run_gemini(gemini_bin, repo, tmp_path / "home-a")
    assert gemini.proc.returncode == 0, gemini.describe()
    git(repo, "rm", "-q", "calc.py", "test_calc.py")  # the next member starts over
    git(repo, "commit", "-qm", "Start over")
    qwen = agents.run_qwen(qwen_bin, repo, tmp_path / "home-b")
    assert qwen.proc.returncode == 0, qwen.describe()
    proc = gasp(repo, "adapt", "qwen-code", "reconcile")
    assert proc.returncode == 0, out(proc)
    drained(repo)
    check = gasp(repo, "check")
    assert check.returncode == 0, out(check)
    graph = json.loads(gasp(repo, "fold", "--json").stdout)
    runs = {n["props"]["metadata"]["source"]["agent"]: n for n in graph["nodes"].values()
            if n["kind"] == "run"}
    assert set(runs) == {"gemini", "qwen-code"}
    assert {r["props"]["outcome"] for r in runs.values()} == {"promoted"}
    models = {n["props"]["model"] for n in graph["nodes"].values() if n["kind"] == "model_call"}
    assert models == {GEMINI_MODEL, QWEN_MODEL}
    messages = git(repo, "log", "--format=%B")
    assert all(f"Run-Id: {r['id']}" in messages for r in runs.values())
