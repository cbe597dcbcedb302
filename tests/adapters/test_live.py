"""`git gasp adapt hook`: real hook payloads, one process each, become the importer's run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from git_gasp.adapters.session_writer import run_id_for
from git_gasp.store.lease import Lease
from tests.adapters.samples import (
    CLAUDE_HOOKS,
    CLAUDE_TRANSCRIPT,
    CODEX_HOOKS,
    CODEX_ROLLOUT,
    read_jsonl,
)
from tests.testing.run import drained, gasp, git, out

pytestmark = pytest.mark.slow  # a hook process per payload

SECRET = "sk-ant-api03-" + "Qx7Lm2Vb9Nc4Zr8Tp1Ws6Yd3Kf5Hg0Jj-AA"
CLAUDE_SID = "6f48f32c-63b8-44c3-9f60-37aed18fbcf2"
CODEX_SID = "01a227f0-ba53-7d60-9f50-1d95813560bb"


@pytest.fixture
def agent_repo(tmp_path):
    proc = gasp(tmp_path, "init", "bot")
    assert proc.returncode == 0, out(proc)
    return tmp_path / "bot"


def gitdir(repo: Path) -> Path:
    return Path(git(repo, "rev-parse", "--absolute-git-dir").strip())


def adapter_log(repo: Path) -> str:
    path = gitdir(repo) / "gasp" / "adapter.log"
    return path.read_text() if path.exists() else ""


def hook(repo: Path, payload: dict | bytes, *args: str, env: dict | None = None,
         cwd: Path | None = None) -> subprocess.CompletedProcess:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    proc = subprocess.run(["git", "gasp", "adapt", "hook", *args], cwd=cwd or repo, input=data,
                          capture_output=True, env=env)
    drained(cwd or repo, env)  # the hook only queues: wait for what its drainer records
    return proc


def payloads(path: Path, repo: Path, **override) -> list[dict]:
    rows = read_jsonl(path)
    for row in rows:
        row["cwd"] = str(repo)
        row.update(override)
    return rows


def replay(repo: Path, rows: list[dict]) -> None:
    for row in rows:
        proc = hook(repo, row)
        assert proc.returncode == 0 and proc.stdout == b"", out(proc)


def fold(repo: Path) -> dict:
    proc = gasp(repo, "fold", "--json")
    assert proc.returncode == 0, out(proc)
    return json.loads(proc.stdout)


def kinds(graph: dict) -> list[str]:
    return [n["kind"] for n in graph["nodes"].values()]


def test_claude_hooks_record_the_whole_session_like_the_importer(agent_repo):
    replay(agent_repo, payloads(CLAUDE_HOOKS, agent_repo))
    log = adapter_log(agent_repo)
    assert "error" not in log.lower() and "SessionEnd" in log, log
    check = gasp(agent_repo, "check")
    assert check.returncode == 0, out(check)
    run_id = run_id_for("claude-code", CLAUDE_SID)
    msg = git(agent_repo, "log", "-1", "--format=%B")
    assert f"Run-Id: {run_id}" in msg and "Outcome: promoted" in msg
    assert git(agent_repo, "status", "--porcelain") == ""
    graph = fold(agent_repo)
    nodes = graph["nodes"]
    assert nodes[run_id]["props"]["status"] == "finished"
    k = kinds(graph)
    assert k.count("tool_call") == 6 and k.count("goal") == 1 and k.count("decision") == 1
    calls = [n for n in nodes.values() if n["kind"] == "tool_call"]
    assert sorted(n["props"]["status"] for n in calls) == ["failed"] + ["succeeded"] * 5
    assert all(n["props"]["input_summary"] for n in calls)
    logged = [json.loads(line) for line in (agent_repo / "state/events.jsonl").open()]
    assert [e["payload"]["status"] for e in logged if e["kind"] == "eval.finished"] == [
        "Failed", "Passed"]
    (patch,) = [n for n in nodes.values() if n["kind"] == "patch"]
    assert patch["props"]["references_commit"] == "25b87ee"
    assert patch["props"]["status"] == "Promoted"
    stop = [n for n in nodes.values() if n["kind"] == "observation"
            and n["props"]["metadata"].get("hook") == "Stop"]
    assert [s["props"]["summary"] for s in stop] == ["Fixed add() and committed; the test passes."]
    goal = next(n for n in nodes.values() if n["kind"] == "goal")
    assert {"from": run_id, "rel": "serves", "to": goal["id"], "props": {}} in graph["relations"]
    # the same session's transcript, imported afterwards, adds nothing
    before = (agent_repo / "state/events.jsonl").read_bytes()
    again = gasp(agent_repo, "import", "claude-code", str(CLAUDE_TRANSCRIPT))
    assert again.returncode == 0 and "already imported" in out(again), out(again)
    assert (agent_repo / "state/events.jsonl").read_bytes() == before


def test_codex_hooks_take_exit_codes_from_the_rollout(agent_repo, tmp_path):
    rollout = tmp_path / ".codex" / "sessions" / f"rollout-x-{CODEX_SID}.jsonl"
    rollout.parent.mkdir(parents=True)
    shutil.copy(CODEX_ROLLOUT, rollout)
    replay(agent_repo, payloads(CODEX_HOOKS, agent_repo, transcript_path=str(rollout)))
    assert gasp(agent_repo, "check").returncode == 0
    graph = fold(agent_repo)
    nodes = graph["nodes"].values()
    # the sample's pytest was missing: exit 1 both times, as the importer sees it
    assert [n["props"]["status"] for n in nodes if n["kind"] == "eval"] == ["Failed", "Failed"]
    assert kinds(graph).count("tool_call") == 6
    run = graph["nodes"][run_id_for("codex", CODEX_SID)]
    assert run["props"]["outcome"] == "patched"
    assert run["artifacts"][0]["kind"] == "transcript"
    assert (agent_repo / run["artifacts"][0]["uri"]).exists()
    before = (agent_repo / "state/events.jsonl").read_bytes()
    again = gasp(agent_repo, "import", "codex", str(rollout))
    assert "already imported" in out(again)
    assert (agent_repo / "state/events.jsonl").read_bytes() == before


def _pre_tool(repo: Path, n: int) -> dict:
    return {"session_id": "s-par", "transcript_path": "/nowhere/.claude/projects/x/s.jsonl",
            "cwd": str(repo), "hook_event_name": "PreToolUse", "tool_name": "Read",
            "tool_input": {"file_path": f"/tmp/f{n}"}, "tool_use_id": f"toolu_{n:04d}"}


def test_parallel_hooks_lose_no_event(agent_repo):
    start = {"session_id": "s-par", "cwd": str(agent_repo), "hook_event_name": "SessionStart",
             "transcript_path": "/nowhere/.claude/projects/x/s.jsonl"}
    assert hook(agent_repo, start).returncode == 0
    procs = [subprocess.Popen(["git", "gasp", "adapt", "hook"], cwd=agent_repo,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for _ in range(12)]
    for n, proc in enumerate(procs):
        proc.stdin.write(json.dumps(_pre_tool(agent_repo, n)).encode())
        proc.stdin.close()
    for proc in procs:
        assert proc.wait(timeout=120) == 0
        assert proc.stdout.read() == b""
        proc.stdout.close()
        proc.stderr.close()
    graph = fold(agent_repo)
    calls = [n for n in graph["nodes"].values() if n["kind"] == "tool_call"]
    assert sorted(n["props"]["metadata"]["source"]["key"] for n in calls) == [
        f"toolu_{n:04d}" for n in range(12)], adapter_log(agent_repo)
    assert gasp(agent_repo, "check").returncode == 0
    assert not list((gitdir(agent_repo) / "gasp" / "queue").glob("*.payload"))


def test_a_held_lease_queues_the_event_until_the_next_hook(agent_repo):
    lease = Lease(agent_repo, "someone-else@host")
    lease.ensure()
    env = dict(os.environ, GASP_HOOK_BUDGET="1")
    start = {"session_id": "s-lease", "cwd": str(agent_repo), "hook_event_name": "SessionStart"}
    proc = hook(agent_repo, start, env=env)
    assert proc.returncode == 0 and proc.stdout == b""
    assert "stay queued" in adapter_log(agent_repo)
    assert b"run.started" not in (agent_repo / "state/events.jsonl").read_bytes()
    assert len(list((gitdir(agent_repo) / "gasp" / "queue").glob("*.payload"))) == 1
    lease.release()
    prompt = dict(start, hook_event_name="UserPromptSubmit", prompt="Write the docs")
    assert hook(agent_repo, prompt).returncode == 0
    graph = fold(agent_repo)
    run = graph["nodes"][run_id_for("claude-code", "s-lease")]
    goal = next(n for n in graph["nodes"].values() if n["kind"] == "goal")
    assert run["props"]["goal_id"] == goal["id"] and goal["props"]["title"] == "Write the docs"


def test_hook_never_fails_the_agent(agent_repo, tmp_path):
    for data in (b"", b"not json", b"[1, 2]", json.dumps({"hook_event_name": "Stop"}).encode()):
        proc = hook(agent_repo, data)
        assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b"", out(proc)
    assert "no session_id" in adapter_log(agent_repo)
    elsewhere = tmp_path / "plain"
    elsewhere.mkdir()
    proc = hook(elsewhere, {"session_id": "s", "cwd": str(elsewhere),
                            "hook_event_name": "SessionStart"})
    assert proc.returncode == 0 and proc.stdout == b""
    # a torn log: logged, the event stays queued, the agent carries on
    events = agent_repo / "state/events.jsonl"
    good = events.read_bytes()
    events.write_bytes(good + b'{"id":"torn')
    start = {"session_id": "s-torn", "cwd": str(agent_repo), "hook_event_name": "SessionStart"}
    proc = hook(agent_repo, start)
    assert proc.returncode == 0 and proc.stdout == b""
    assert "torn" in adapter_log(agent_repo)
    events.write_bytes(good)
    assert hook(agent_repo, dict(start, hook_event_name="Stop",
                                 last_assistant_message="done")).returncode == 0
    graph = fold(agent_repo)
    assert run_id_for("claude-code", "s-torn") in graph["nodes"]


def test_hook_redacts_before_anything_is_written(agent_repo):
    base = {"session_id": "s-secret", "cwd": str(agent_repo),
            "transcript_path": "/nowhere/.claude/projects/x/s.jsonl"}
    rows = [dict(base, hook_event_name="SessionStart"),
            dict(base, hook_event_name="UserPromptSubmit", prompt=f"use key {SECRET}"),
            dict(base, hook_event_name="PreToolUse", tool_name="Bash", tool_use_id="toolu_s1",
                 tool_input={"command": f"curl -H 'x-api-key: {SECRET}' example.com"}),
            dict(base, hook_event_name="PostToolUse", tool_name="Bash", tool_use_id="toolu_s1",
                 tool_input={"command": "curl"},
                 tool_response={"stdout": f"echoed {SECRET}", "stderr": ""}),
            dict(base, hook_event_name="Stop", last_assistant_message=f"the key is {SECRET}")]
    replay(agent_repo, rows)
    assert b"[REDACTED:anthropic_key:" in (agent_repo / "state/events.jsonl").read_bytes()
    for path in [agent_repo / "state/events.jsonl",
                 *(p for p in (gitdir(agent_repo) / "gasp").rglob("*") if p.is_file())]:
        assert SECRET.encode() not in path.read_bytes(), path


def test_a_resumed_session_continues_in_a_new_run(agent_repo):
    base = {"session_id": "s-again", "cwd": str(agent_repo)}
    replay(agent_repo, [dict(base, hook_event_name="SessionStart"),
                        dict(base, hook_event_name="SessionEnd", reason="other"),
                        dict(base, hook_event_name="SessionStart", source="resume"),
                        dict(base, hook_event_name="SessionEnd", reason="other")])
    assert gasp(agent_repo, "check").returncode == 0
    nodes = fold(agent_repo)["nodes"]
    first = run_id_for("claude-code", "s-again")
    assert nodes[first]["props"]["status"] == nodes[f"{first}.2"]["props"]["status"] == "finished"
    assert git(agent_repo, "log", "-1", "--format=%s").startswith(f"run {first}.2:")


def test_interleaved_sessions_keep_their_own_runs(agent_repo):
    a = {"session_id": "s-a", "cwd": str(agent_repo)}
    b = {"session_id": "s-b", "cwd": str(agent_repo)}
    tool = {"tool_name": "Read", "tool_input": {"file_path": "x"}}
    replay(agent_repo, [dict(a, hook_event_name="SessionStart"),
                        dict(b, hook_event_name="SessionStart"),
                        dict(a, hook_event_name="PreToolUse", tool_use_id="toolu_a", **tool),
                        dict(b, hook_event_name="PreToolUse", tool_use_id="toolu_b", **tool),
                        dict(a, hook_event_name="SessionEnd"),
                        dict(b, hook_event_name="SessionEnd")])
    assert gasp(agent_repo, "check").returncode == 0
    graph = fold(agent_repo)
    calls = {n["props"]["metadata"]["source"]["session_id"]: n["props"]["run_id"]
             for n in graph["nodes"].values() if n["kind"] == "tool_call"}
    assert calls == {"s-a": run_id_for("claude-code", "s-a"),
                     "s-b": run_id_for("claude-code", "s-b")}
    assert all(graph["nodes"][r]["props"]["status"] == "finished" for r in calls.values())


def test_import_runs_beside_an_open_hook_session(agent_repo):
    start = {"session_id": "s-open", "cwd": str(agent_repo), "hook_event_name": "SessionStart"}
    assert hook(agent_repo, start).returncode == 0
    proc = gasp(agent_repo, "import", "claude-code", str(CLAUDE_TRANSCRIPT))
    assert proc.returncode == 0 and "promoted" in out(proc), out(proc)
    assert hook(agent_repo, dict(start, hook_event_name="SessionEnd")).returncode == 0
    assert gasp(agent_repo, "check").returncode == 0
    nodes = fold(agent_repo)["nodes"]
    for sid in ("s-open", CLAUDE_SID):
        assert nodes[run_id_for("claude-code", sid)]["props"]["status"] == "finished"


def _drain_once(repo: Path, row: dict, again: tuple[Path, bytes] | None = None):
    """Queue `row` (or put back the entry `again`) and drain it; return the entry."""
    from git_gasp.adapters.agent_hook_queue import drain, enqueue
    from git_gasp.adapters.live import gasp_dir
    from git_gasp.adapters.payloads import parse_hook_payload

    gdir = gasp_dir(repo)
    if again is None:
        path = Path(enqueue(gdir, parse_hook_payload(row, None).agent, json.dumps(row).encode()))
        again = (path, path.read_bytes())
    else:
        again[0].write_bytes(again[1])
    assert drain(repo, gdir, time.monotonic() + 60) == 1, adapter_log(repo)
    return again


def test_a_replayed_queue_entry_adds_nothing(agent_repo):
    """A hook killed after appending, before saving its progress and unlinking its
    entry, replays the entry: the same ids, so nothing is recorded twice."""
    events = agent_repo / "state/events.jsonl"
    sessions = gitdir(agent_repo) / "gasp" / "sessions"
    for row in payloads(CLAUDE_HOOKS, agent_repo):
        if row["hook_event_name"] == "SessionEnd":
            continue
        saved = {p: p.read_bytes() for p in sessions.glob("*.json")}
        entry = _drain_once(agent_repo, row)
        after = events.read_bytes()
        for path in sessions.glob("*.json"):  # the progress as it was before the entry
            if path in saved:
                path.write_bytes(saved[path])
            else:
                path.unlink()
        _drain_once(agent_repo, row, entry)
        assert events.read_bytes() == after, row["hook_event_name"]
        _drain_once(agent_repo, row, entry)  # and with the progress saved
        assert events.read_bytes() == after, row["hook_event_name"]
    assert "error" not in adapter_log(agent_repo).lower()
    check = gasp(agent_repo, "check")
    assert check.returncode == 0, out(check)
    k = kinds(fold(agent_repo))
    assert k.count("tool_call") == 6 and k.count("goal") == 1 and k.count("decision") == 1


def test_hooks_keep_a_cached_graph_lazy(agent_repo):
    from git_gasp.adapters.agent_hook_queue import process
    from git_gasp.adapters.live import gasp_dir
    from git_gasp.adapters.payloads import parse_hook_payload
    from git_gasp.runtime import AgentState

    rows = payloads(CLAUDE_HOOKS, agent_repo)
    replay(agent_repo, rows[:1])
    with AgentState.open(agent_repo, "w") as state:
        state.write_snapshot()
    AgentState.open(agent_repo, "w").close()  # fills the snapshot cache
    state = AgentState.open(agent_repo, "w")
    try:
        assert state.seed_cached and state.graph.is_lazy
        for row in rows[1:4]:
            h = parse_hook_payload(row, None)
            process(state, h, gasp_dir(agent_repo), agent_repo)
            assert state.graph.is_lazy, row["hook_event_name"]
    finally:
        state.close()
