"""The harness itself: live Claude Code and Codex sessions against the scripted model.

Each session writes a bug, fails a test, fixes it and commits. First with hooks
recorded by a tiny shell command: the transcript/rollout the agent wrote must read back
and lift to the whole spine (goal, eval Failed, failure, eval Passed, patch pinned to
the commit git made, decision promoting it). Then with our own hooks, installed by
`git gasp adapt … install` in a fresh `git gasp init` repo: the hooks alone must leave
a conformant, committed run holding that spine, and importing the session's transcript
afterwards must add nothing. And runs that end without SessionEnd: a Claude Code
session killed mid-tool is closed (abandoned) by the next session's SessionStart; a
Codex session whose hooks send no SessionEnd is closed by `adapt codex reconcile` with
the outcome its rollout shows. And a Claude Code session that asks its own history
through `git gasp mcp` (wired by `adapt claude-code install --mcp`): the answer reaches
the model and the MCP tool call is recorded like any other. Without npm (or the
registry) these tests skip, saying why.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from git_gasp.adapters import claude_code, codex
from git_gasp.adapters.lifting import lift
from git_gasp.adapters.payloads import parse_hook_payload
from git_gasp.adapters.records import MODEL_RESPONSE, TOOL_USE
from git_gasp.adapters.session_writer import run_id_for
from tests.e2e import agents
from tests.e2e.servers import BUGGY, MARKER, PROMPT, ClaudeHandler, ModelServer
from tests.testing.run import drained, gasp, git, out

pytestmark = pytest.mark.slow  # live agent sessions

# Fixtures live here, not in a conftest.py (a second conftest module would shadow
# tests/conftest.py for suites that `from conftest import` it).


def _binary(package: str, find) -> Path:
    return agents.installed(package, find)


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    return _binary(agents.CLAUDE_PKG, agents.claude_binary)


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    return _binary(agents.CODEX_PKG, agents.codex_binary)


@pytest.fixture
def app_repo(tmp_path) -> Path:
    """A git repo with one commit, where the agent works."""
    repo = tmp_path / "app"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "init"], cwd=repo, check=True)
    return repo


@pytest.fixture
def agent_home(tmp_path) -> Path:
    home = tmp_path / "agent-home"
    home.mkdir()
    return home


SPINE = ["goal", "eval", "failure", "eval", "status", "patch", "decision", "status"]


def _record_hooks(repo, settings_rel, log):
    path = repo / settings_rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": agents.hook_entries(f"cat >> {log}; echo >> {log}")}))


def _hooks(log):
    return [parse_hook_payload(line) for line in log.read_text().splitlines() if line.strip()]


def _check_session(session, transcript, repo, log, agent):
    assert session.proc.returncode == 0, session.describe()
    assert session.transcript is not None, session.describe()
    head = git(repo, "rev-parse", "HEAD").strip()
    assert git(repo, "log", "-1", "--format=%s").strip() == "Fix add"
    assert transcript.warnings == [] and transcript.session.agent_version is not None
    assert len(transcript.by_kind(MODEL_RESPONSE)) == 7
    assert len(transcript.by_kind(TOOL_USE)) == 6
    items = lift(transcript.records)
    assert [i.kind for i in items] == SPINE
    assert [i.data["status"] for i in items if i.kind == "eval"] == ["Failed", "Passed"]
    patch = next(i for i in items if i.kind == "patch")
    assert patch.data["commit"] and head.startswith(patch.data["commit"])
    hooks = _hooks(log)
    assert {h.agent for h in hooks} == {agent}
    events = [h.event for h in hooks]
    assert events[0] == "SessionStart" and events[-1] == "SessionEnd"
    assert events.count("PreToolUse") == 6 and "Stop" in events
    assert {h.session_id for h in hooks} == {transcript.session.session_id}
    return hooks


def test_live_claude_code_session(claude_bin, app_repo, agent_home, tmp_path):
    log = tmp_path / "hooks.jsonl"
    _record_hooks(app_repo, ".claude/settings.json", log)
    session = agents.run_claude(claude_bin, app_repo, agent_home)
    assert session.transcript is not None, session.describe()
    t = claude_code.read_transcript(session.transcript)
    hooks = _check_session(session, t, app_repo, log, "claude-code")
    failures = [h for h in hooks if h.event == "PostToolUseFailure"]
    assert len(failures) == 1 and failures[0].exit_code == 1
    assert all(r[1].startswith("/v1/messages") for r in session.requests)


def test_live_codex_session(codex_bin, app_repo, agent_home, tmp_path):
    log = tmp_path / "hooks.jsonl"
    _record_hooks(app_repo, ".codex/hooks.json", log)
    session = agents.run_codex(codex_bin, app_repo, agent_home)
    assert session.transcript is not None, session.describe()
    t = codex.read_rollout(session.transcript)
    hooks = _check_session(session, t, app_repo, log, "codex")
    failed_call = [h for h in hooks if h.event == "PostToolUse"][2]
    assert codex.exit_code_for(session.transcript, failed_call.tool_use_id) == 1
    assert all(r[1] == "/v1/responses" for r in session.requests if r[0] == "POST")


# --- our hooks, installed with `git gasp adapt … install`, in a fresh agent repo -------


@pytest.fixture
def gasp_repo(tmp_path) -> Path:
    """A fresh `git gasp init` repo: the agent works in it and its hooks record into it."""
    proc = gasp(tmp_path, "init", "bot")
    assert proc.returncode == 0, out(proc)
    return tmp_path / "bot"


def _fold(repo: Path) -> dict:
    proc = gasp(repo, "fold", "--json")
    assert proc.returncode == 0, out(proc)
    return json.loads(proc.stdout)


def _check_recorded(repo: Path, session, agent: str, home: Path) -> None:
    """The hooks alone made a conformant, committed run with the whole spine."""
    assert session.proc.returncode == 0, session.describe()
    drained(repo)  # the hooks only queue: what a drainer still records is in the log next
    adapter_log = Path(git(repo, "rev-parse", "--absolute-git-dir").strip()) / "gasp/adapter.log"
    log_text = adapter_log.read_text() if adapter_log.exists() else "(no adapter.log)"
    assert "error" not in log_text.lower() and "failed" not in log_text, log_text
    check = gasp(repo, "check")
    assert check.returncode == 0, out(check) + log_text
    fix = git(repo, "log", "--format=%H", "--grep=^Fix add$").strip()
    assert fix, git(repo, "log", "--oneline")
    message = git(repo, "log", "-1", "--format=%B")
    reader = claude_code.read_transcript if agent == "claude-code" else codex.read_rollout
    sid = reader(session.transcript).session.session_id
    graph = _fold(repo)
    nodes = list(graph["nodes"].values())
    runs = [n for n in nodes if n["kind"] == "run"]
    assert [n["id"] for n in runs] == [run_id_for(agent, sid)]
    run = runs[0]
    assert run["props"]["status"] == "finished" and run["props"]["outcome"] == "promoted"
    assert f"Run-Id: {run['id']}" in message and "Outcome: promoted" in message, log_text
    assert git(repo, "status", "--porcelain", "--", "state") == ""
    calls = [n for n in nodes if n["kind"] == "tool_call"]
    assert len(calls) == 6 and all(n["props"]["status"] != "running" for n in calls)
    # Node ids are stable hashes (a replayed hook adds nothing), so take the evals'
    # order from the log, not from the folded nodes.
    evals = [json.loads(line)["payload"]["status"]
             for line in (repo / "state/events.jsonl").read_text().splitlines()
             if json.loads(line)["kind"] == "eval.finished"]
    assert evals == ["Failed", "Passed"]
    goals = [n for n in nodes if n["kind"] == "goal"]
    assert [g["props"]["title"] for g in goals] == [PROMPT]
    (patch,) = [n for n in nodes if n["kind"] == "patch"]
    assert patch["props"]["references_commit"] == fix and patch["props"]["status"] == "Promoted"
    assert any(a["uri"] == f"git:{fix}" for a in patch["artifacts"])
    assert [n["kind"] for n in nodes].count("decision") == 1
    assert all(n["props"]["metadata"]["lifted_by"] for n in nodes
               if n["kind"] in ("goal", "eval", "failure", "patch", "decision"))
    rels = {(r["from"], r["rel"], r["to"]) for r in graph["relations"]}
    assert (run["id"], "serves", goals[0]["id"]) in rels
    _ended_and_counted(repo, nodes)
    _check_faithful(repo, session, agent, home)


def _ended_and_counted(repo: Path, nodes: list[dict]) -> None:
    """The goal and the failure end as the session did (promoted: Achieved; the passing
    run after the fix: Resolved), and fold, view --json and log count the log alike."""
    ends = {n["kind"]: n["props"]["status"] for n in nodes if n["kind"] in ("goal", "failure")}
    assert ends == {"goal": "Achieved", "failure": "Resolved"}, ends
    count = json.loads(gasp(repo, "view", "--json").stdout)["count"]
    lines = (repo / "state/events.jsonl").read_text().splitlines()
    assert count["events"]["all"] == len(lines) and count["nodes"] == len(nodes)
    assert gasp(repo, "log", "--count", "--ops").stdout.decode().startswith(
        f"{len(lines)} events ({count['events']['domain']} domain, {count['events']['ops']} ops)")
    assert gasp(repo, "fold").stdout.decode().startswith(
        f"state/events.jsonl: {len(lines)} events (")


def _model_events(repo: Path) -> list[tuple[str, dict]]:
    return [(e["kind"], e["payload"]) for e in map(
        json.loads, (repo / "state/events.jsonl").read_text().splitlines())
        if e["kind"] in ("model.called", "model.finished")]


def _check_faithful(repo: Path, session, agent: str, home: Path) -> None:
    """Each model turn has a model.called naming its model, as `import` records it;
    no event holds the machine's HOME or project path, nor (under the default
    `file_inputs = "digest"`) a line of a file the agent wrote and edited."""
    reader = claude_code.read_transcript if agent == "claude-code" else codex.read_rollout
    turns = reader(session.transcript).by_kind(MODEL_RESPONSE)
    models = _model_events(repo)
    called = [p for k, p in models if k == "model.called"]
    assert len(called) == len(turns) == 7
    assert [p["model"] for p in called] == [t.data["model"] for t in turns]
    assert all(p["model"] and p["model"] != "unknown" for p in called)
    lines = (repo / "state/events.jsonl").read_text().splitlines()
    project = repo
    paths = {str(home), os.path.realpath(home), str(project), os.path.realpath(project),
             os.environ["HOME"]}
    assert [(p, line) for line in lines for p in paths if p in line] == []
    assert [line for line in lines if MARKER in line] == []
    # the same session imported into a fresh repository: the same model events
    fresh = repo.parent / "imported"
    assert gasp(repo.parent, "init", "imported").returncode == 0
    proc = gasp(fresh, "import", agent, str(session.transcript))
    assert proc.returncode == 0, out(proc)
    assert _model_events(fresh) == models


def _import_adds_nothing(repo: Path, agent: str, transcript: Path) -> None:
    log = (repo / "state/events.jsonl").read_bytes()
    again = gasp(repo, "import", agent, str(transcript))
    assert again.returncode == 0 and "already imported" in out(again), out(again)
    assert (repo / "state/events.jsonl").read_bytes() == log


def test_claude_code_hooks_record_the_session(claude_bin, gasp_repo, agent_home):
    proc = gasp(gasp_repo, "adapt", "claude-code", "install")
    assert proc.returncode == 0, out(proc)
    session = agents.run_claude(claude_bin, gasp_repo, agent_home)
    assert session.transcript is not None, session.describe()
    _check_recorded(gasp_repo, session, "claude-code", agent_home)
    _import_adds_nothing(gasp_repo, "claude-code", session.transcript)


def test_codex_hooks_record_the_session(codex_bin, gasp_repo, agent_home):
    proc = gasp(gasp_repo, "adapt", "codex", "install")
    assert proc.returncode == 0, out(proc)
    assert "trust_level" in out(proc)
    session = agents.run_codex(codex_bin, gasp_repo, agent_home)
    assert session.transcript is not None, session.describe()
    _check_recorded(gasp_repo, session, "codex", agent_home)
    _import_adds_nothing(gasp_repo, "codex", session.transcript)


# --- runs that end without SessionEnd ------------------------------------------------


def _wait_for(what, predicate, timeout: float = 120.0) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.2)


WAIT = "python3 -c 'import time; time.sleep(300)'"  # (Claude Code refuses a bare long sleep)


def _run_claude_killed(binary: Path, repo: Path, home: Path, log) -> None:
    """A `claude -p` session killed (SIGKILL, no SessionEnd) while its tool runs."""
    script = [("Write", {"file_path": "{cwd}/calc.py", "content": BUGGY}),
              ("Bash", {"command": WAIT, "description": "Wait for the service"}), "done"]
    events = repo / "state/events.jsonl"
    queue = Path(git(repo, "rev-parse", "--absolute-git-dir").strip()) / "gasp/queue"
    with ModelServer(ClaudeHandler, script, str(repo)) as server:
        env = agents.agent_env(home)
        env.update(ANTHROPIC_BASE_URL=f"http://127.0.0.1:{server.port}",
                   ANTHROPIC_API_KEY="sk-ant-test-not-a-real-key")
        proc = subprocess.Popen(
            [str(binary), "-p", PROMPT, "--allowedTools", "Bash,Write,Edit,Read"], cwd=repo,
            env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True)
        try:
            _wait_for("the sleep's tool.called", lambda: b"time.sleep(300)" in events.read_bytes()
                      or proc.poll() is not None)
            # let the PreToolUse hook finish (entry recorded, lease released) first
            _wait_for("the hook to finish", lambda: not list(queue.glob("*.payload"))
                      and not (repo / ".agent/lease").exists())
            assert proc.poll() is None, "claude exited before it could be killed"
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


def test_killed_claude_code_session_is_closed_by_the_next_session(claude_bin, gasp_repo,
                                                                  agent_home, tmp_path):
    proc = gasp(gasp_repo, "adapt", "claude-code", "install")
    assert proc.returncode == 0, out(proc)
    with open(tmp_path / "claude.out", "wb") as log:
        try:
            _run_claude_killed(claude_bin, gasp_repo, agent_home, log)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{(tmp_path / 'claude.out').read_text()}") from None
    running = [n["id"] for n in _fold(gasp_repo)["nodes"].values()
               if n["kind"] == "run" and n["props"]["status"] == "running"]
    assert len(running) == 1, running
    killed = running[0]
    session = agents.run_claude(claude_bin, gasp_repo, agent_home)
    assert session.proc.returncode == 0, session.describe()
    check = gasp(gasp_repo, "check")
    assert check.returncode == 0, out(check)
    nodes = _fold(gasp_repo)["nodes"]
    run = nodes[killed]
    assert (run["props"]["status"], run["props"]["outcome"]) == ("finished", "abandoned")
    assert run["props"]["metadata"]["closed_by"] == "next-session"
    rel = f"transcripts/{killed}.jsonl.gz"
    assert [a["uri"] for a in run["artifacts"]] == [rel] and (gasp_repo / rel).exists()
    assert git(gasp_repo, "ls-files", rel).strip() == rel
    assert git(gasp_repo, "log", "--format=%s", f"--grep=^run {killed}: abandoned$").strip()
    (second,) = [n for n in nodes.values() if n["kind"] == "run" and n["id"] != killed]
    assert second["props"]["outcome"] == "promoted", second


def test_codex_session_without_session_end_is_closed_by_reconcile(codex_bin, gasp_repo,
                                                                  agent_home):
    proc = gasp(gasp_repo, "adapt", "codex", "install")
    assert proc.returncode == 0, out(proc)
    hooks = gasp_repo / ".codex/hooks.json"
    data = json.loads(hooks.read_text())
    data["hooks"].pop("SessionEnd", None)  # as a Codex that sends none
    hooks.write_text(json.dumps(data))
    session = agents.run_codex(codex_bin, gasp_repo, agent_home)
    assert session.proc.returncode == 0, session.describe()
    sid = codex.read_rollout(session.transcript).session.session_id
    run_id = run_id_for("codex", sid)
    assert _fold(gasp_repo)["nodes"][run_id]["props"]["status"] == "running"
    proc = gasp(gasp_repo, "adapt", "codex", "reconcile")
    assert proc.returncode == 0 and f"{run_id} finished (promoted)" in out(proc), out(proc)
    _check_recorded(gasp_repo, session, "codex", agent_home)
    assert _fold(gasp_repo)["nodes"][run_id]["props"]["metadata"]["closed_by"] == "reconcile"
    _import_adds_nothing(gasp_repo, "codex", session.transcript)


# --- the agent asks its own history through `git gasp mcp` ------------------------------

MCP_TOOL = "mcp__gasp__gasp_search"  # Claude Code's name: mcp__<server>__<tool>


def test_claude_code_asks_its_history_through_mcp(claude_bin, gasp_repo, agent_home):
    """`adapt claude-code install --mcp` wires the server in .mcp.json; the scripted model
    calls gasp_search, the answer (holding the goal's id) comes back to it as the tool
    result, and our hooks record that MCP tool call in the run like any other."""
    goal = gasp(gasp_repo, "record", "goal", "--title", "Teach the tokenizer unicode")
    assert goal.returncode == 0, out(goal)
    goal_id = goal.stdout.decode().strip()
    git(gasp_repo, "commit", "-qam", "a goal to find")
    proc = gasp(gasp_repo, "adapt", "claude-code", "install", "--mcp")
    assert proc.returncode == 0 and "registered the gasp MCP server" in out(proc), out(proc)
    assert json.loads((gasp_repo / ".mcp.json").read_text())["mcpServers"]["gasp"] == {
        "type": "stdio", "command": "git", "args": ["gasp", "mcp"]}
    # The user's approval of the project's servers (Claude Code asks for it once).
    (gasp_repo / ".claude/settings.local.json").write_text(json.dumps(
        {"enableAllProjectMcpServers": True, "enabledMcpjsonServers": ["gasp"]}))
    script = [(MCP_TOOL, {"query": "tokenizer unicode"}), "Found the goal."]
    with ModelServer(ClaudeHandler, script, str(gasp_repo)) as server:
        env = agents.agent_env(agent_home)
        # `-p` connects MCP servers in the background unless told to wait: on a busy
        # machine (xdist's workers) the first request left before `git gasp mcp` was up.
        env.update(ANTHROPIC_BASE_URL=f"http://127.0.0.1:{server.port}",
                   ANTHROPIC_API_KEY="sk-ant-test-not-a-real-key",
                   MCP_CONNECTION_NONBLOCKING="false")
        session = subprocess.run(
            [str(claude_bin), "-p", "What did I plan for the tokenizer?",
             "--allowedTools", MCP_TOOL], cwd=gasp_repo, env=env, capture_output=True,
            text=True, timeout=240, stdin=subprocess.DEVNULL, check=False)
        requests = [r[2] for r in server.requests if r[0] == "POST" and r[2]]
    said = f"exit {session.returncode}\n{session.stdout[-2000:]}\n{session.stderr[-3000:]}"
    assert session.returncode == 0, said
    # Claude Code 2.1 defers MCP tools (named in a system message, schema through
    # ToolSearch): the tool is offered by name in the first request either way.
    assert requests and MCP_TOOL in json.dumps(requests[0]), said
    results = [b for body in requests for m in body.get("messages", [])
               if isinstance(m.get("content"), list) for b in m["content"]
               if isinstance(b, dict) and b.get("type") == "tool_result"]
    assert results, said
    text = json.dumps(results[-1]["content"])
    assert goal_id in text and not results[-1].get("is_error"), text
    calls = [n for n in _fold(gasp_repo)["nodes"].values() if n["kind"] == "tool_call"]
    assert [c["props"]["tool"] for c in calls] == [MCP_TOOL], calls
    assert calls[0]["props"]["status"] != "running"
    check = gasp(gasp_repo, "check")
    assert check.returncode == 0, out(check)
