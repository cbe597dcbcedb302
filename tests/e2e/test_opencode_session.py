"""A live OpenCode session recorded by git-gasp's plugin against a scripted
OpenAI-compatible model (``servers.ChatHandler``, a custom provider with a
``baseURL`` in the project's ``opencode.json``).

`git gasp adapt opencode install` in a fresh `git gasp init` repo, then one headless
``opencode run`` writes a bug, fails a test, fixes it and commits: the plugin alone must
leave a conformant log with OpenCode's tool calls, one model call per finished
assistant message naming the scripted model, and the lifted spine (goal, eval Failed,
failure, eval Passed, patch pinned to the commit, decision). A headless run ends
on ``session.idle`` with no ``session.deleted``, and OpenCode sends its plugins no event
when it exits: ``adapt opencode reconcile`` closes the run (abandoned: git-gasp reads no
OpenCode transcript yet to see the turn finished). OpenCode installs its plugin SDK
(``@opencode-ai/plugin``) and the provider package from the npm registry at start.
Without npm (or the registry) the test skips, saying why.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e import agents
from tests.e2e.servers import BUGGY, COMMIT, FINAL, PROMPT, TEST, ChatHandler, ModelServer
from tests.testing.run import drained, gasp, git, out

pytestmark = pytest.mark.slow  # a live agent session

OPENCODE_PKG = "opencode-ai@1.18.33"
MODEL = "scripted/qwen3-coder-plus"


def opencode_binary(prefix: Path) -> Path | None:
    js = prefix / "node_modules/.bin/opencode"
    return js if js.exists() else None


@pytest.fixture(scope="session")
def opencode_bin() -> Path:
    return agents.installed(OPENCODE_PKG, opencode_binary)


def opencode_script(python: str) -> list:
    """(OpenCode tool name, args) steps, then the final text."""
    test = f"{shlex.quote(python)} -m pytest -q -p no:cacheprovider test_calc.py"
    return [
        ("write", {"filePath": "{cwd}/calc.py", "content": BUGGY}),
        ("write", {"filePath": "{cwd}/test_calc.py", "content": TEST}),
        ("bash", {"command": test, "description": "Run the tests"}),
        ("edit", {"filePath": "{cwd}/calc.py", "oldString": "return a - b",
                  "newString": "return a + b"}),
        ("bash", {"command": test, "description": "Run the tests again"}),
        ("bash", {"command": COMMIT, "description": "Commit the fix"}),
        FINAL,
    ]


def run_opencode(binary: Path, repo: Path, home: Path) -> tuple[subprocess.CompletedProcess,
                                                                 list]:
    """One `opencode run` in `repo` against the scripted model, every tool allowed."""
    with ModelServer(ChatHandler, opencode_script(sys.executable), str(repo)) as server:
        config = {"provider": {"scripted": {
                      "npm": "@ai-sdk/openai-compatible", "name": "Scripted",
                      "options": {"baseURL": f"http://127.0.0.1:{server.port}/v1",
                                  "apiKey": "test-key-not-a-real-key"},
                      "models": {"qwen3-coder-plus": {"name": "qwen3-coder-plus"}}}},
                  "model": MODEL, "small_model": MODEL, "autoupdate": False,
                  "share": "disabled",
                  "permission": {"edit": "allow", "bash": "allow", "webfetch": "deny"}}
        (repo / "opencode.json").write_text(json.dumps(config))
        env = agents.agent_env(home)
        env.update(PWD=str(repo),  # OpenCode takes its project from $PWD
                   PATH=f"{Path(sys.executable).parent}:{env.get('PATH', '')}",
                   OPENCODE_DISABLE_AUTOUPDATE="1", OPENCODE_DISABLE_MODELS_FETCH="1",
                   OPENCODE_DISABLE_LSP_DOWNLOAD="1")
        proc = subprocess.run([str(binary), "run", "-m", MODEL, PROMPT], cwd=repo, env=env,
                              capture_output=True, text=True, timeout=300,
                              stdin=subprocess.DEVNULL, check=False)
        return proc, list(server.requests)


def test_opencode_plugin_records_the_session(opencode_bin, tmp_path):
    assert gasp(tmp_path, "init", "bot").returncode == 0
    repo = tmp_path / "bot"
    assert gasp(repo, "adapt", "opencode", "install").returncode == 0
    proc, requests = run_opencode(opencode_bin, repo, tmp_path / "agent-home")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert sum(1 for r in requests if r[1].endswith("/chat/completions")) >= 7
    drained(repo)
    gdir = Path(git(repo, "rev-parse", "--absolute-git-dir").strip()) / "gasp"
    log_text = (gdir / "adapter.log").read_text()
    assert "error" not in log_text.lower() and "failed" not in log_text, log_text
    closed = gasp(repo, "adapt", "opencode", "reconcile")  # headless: no session end
    assert closed.returncode == 0 and "closed run_opencode.ses" in out(closed), out(closed)
    check = gasp(repo, "check")
    assert check.returncode == 0, out(check) + log_text
    events = [json.loads(line) for line in
              (repo / "state/events.jsonl").read_text().splitlines() if line.strip()]
    assert [e["payload"]["tool"] for e in events if e["kind"] == "tool.called"] == [
        "write", "write", "bash", "edit", "bash", "bash"]
    called = [e["payload"] for e in events if e["kind"] == "model.called"]
    # one model call per finished assistant message: one per scripted reply at least
    assert len(called) >= 7 and {c["model"] for c in called} == {MODEL.split("/")[1]}, called
    assert {c.get("provider") for c in called} == {"scripted"}, called
    finished = [e["payload"] for e in events if e["kind"] == "model.finished"]
    assert len(finished) == len(called), finished
    assert [e["payload"]["status"] for e in events if e["kind"] == "eval.finished"] == [
        "Failed", "Passed"]
    fix = git(repo, "log", "--format=%H", "--grep=^Fix add$").strip()
    nodes = list(json.loads(gasp(repo, "fold", "--json").stdout)["nodes"].values())
    (goal,) = [n for n in nodes if n["kind"] == "goal"]
    # `opencode run` hands the prompt on quoted: its text part is "…", as recorded
    assert goal["props"]["title"] == f'"{PROMPT}"' and goal["props"]["status"] == "Achieved"
    (patch,) = [n for n in nodes if n["kind"] == "patch"]
    assert patch["props"]["references_commit"] == fix and patch["props"]["status"] == "Promoted"
    assert [n["kind"] for n in nodes].count("decision") == 1
    assert git(repo, "status", "--porcelain", "--", "state") == ""
