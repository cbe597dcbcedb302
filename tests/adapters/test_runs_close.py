"""Runs always close: killed sessions, agents that send no SessionEnd, replays, stable
keys for every tool call, incremental lifting, the archived transcript and its rescue."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from git_gasp.adapters.records import read_raw
from git_gasp.adapters.session_close import agent_process, alive
from git_gasp.adapters.session_writer import redacted_archive, run_id_for
from git_gasp.redact.redactor import Redactor
from tests.adapters.samples import (
    CLAUDE_HOOKS,
    CLAUDE_TRANSCRIPT,
    CODEX_HOOKS,
    CODEX_ROLLOUT,
    read_jsonl,
)
from tests.testing.run import gasp, git, out

pytestmark = pytest.mark.slow  # many CLI processes

SECRET = "sk-ant-api03-" + "Zq8Lm2Vb9Nc4Zr8Tp1Ws6Yd3Kf5Hg0Jj-AA"
CLAUDE_SID = "6f48f32c-63b8-44c3-9f60-37aed18fbcf2"
CODEX_SID = "01a227f0-ba53-7d60-9f50-1d95813560bb"
# Runs each hook as a child of one short-lived process: the "agent", gone afterwards.
_AGENT = ("import json, subprocess, sys\n"
          "for row in json.load(sys.stdin):\n"
          "    subprocess.run(['git', 'gasp', 'adapt', 'hook'], input=json.dumps(row).encode(),"
          " check=True)\n")


@pytest.fixture
def repo(tmp_path) -> Path:
    proc = gasp(tmp_path, "init", "bot")
    assert proc.returncode == 0, out(proc)
    return tmp_path / "bot"


def gdir(repo: Path) -> Path:
    return Path(git(repo, "rev-parse", "--absolute-git-dir").strip()) / "gasp"


def hook(repo: Path, row: dict, env: dict | None = None) -> None:
    proc = subprocess.run(["git", "gasp", "adapt", "hook"], cwd=repo, capture_output=True,
                          input=json.dumps(row).encode(), env=env)
    assert proc.returncode == 0 and proc.stdout == b"", out(proc)


def hooks_of_a_gone_agent(repo: Path, rows: list[dict]) -> None:
    subprocess.run([sys.executable, "-c", _AGENT], input=json.dumps(rows).encode(), cwd=repo,
                   check=True)


def rows_of(path: Path, repo: Path, **override) -> list[dict]:
    rows = read_jsonl(path)
    for row in rows:
        row["cwd"] = str(repo)
        row.update(override)
    return rows


def fold(repo: Path) -> dict:
    proc = gasp(repo, "fold", "--json")
    assert proc.returncode == 0, out(proc)
    return json.loads(proc.stdout)


def events(repo: Path) -> list[dict]:
    return [json.loads(line) for line in (repo / "state/events.jsonl").open()]


def checked(repo: Path) -> None:
    proc = gasp(repo, "check")
    log = gdir(repo) / "adapter.log"
    assert proc.returncode == 0, out(proc) + (log.read_text() if log.exists() else "")


def killed_transcript(path: Path) -> Path:
    """A Claude Code transcript cut off while a tool runs (no final turn)."""
    lines = [{"type": "user", "sessionId": "s-killed", "uuid": "u1",
              "message": {"role": "user", "content": f"deploy with {SECRET}"}},
             {"type": "assistant", "sessionId": "s-killed", "uuid": "u2", "parentUuid": "u1",
              "message": {"id": "msg_1", "role": "assistant", "stop_reason": "tool_use",
                          "content": [{"type": "tool_use", "id": "toolu_k1", "name": "Bash",
                                       "input": {"command": "sleep 600"}}]}}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_killed_session_is_closed_abandoned_by_the_next_session_start(repo, tmp_path):
    transcript = killed_transcript(tmp_path / "killed.jsonl")
    base = {"session_id": "s-killed", "cwd": str(repo), "transcript_path": str(transcript)}
    hooks_of_a_gone_agent(repo, [
        dict(base, hook_event_name="SessionStart", source="startup"),
        dict(base, hook_event_name="UserPromptSubmit", prompt=f"deploy with {SECRET}"),
        dict(base, hook_event_name="PreToolUse", tool_name="Bash", tool_use_id="toolu_k1",
             tool_input={"command": "sleep 600"})])
    killed = run_id_for("claude-code", "s-killed")
    assert fold(repo)["nodes"][killed]["props"]["status"] == "running"
    checked(repo)
    hook(repo, {"session_id": "s-next", "cwd": str(repo), "hook_event_name": "SessionStart",
                "source": "startup"})
    graph = fold(repo)
    run = graph["nodes"][killed]
    assert run["props"]["status"] == "finished" and run["props"]["outcome"] == "abandoned"
    assert run["props"]["metadata"]["closed_by"] == "next-session"
    assert graph["nodes"][run_id_for("claude-code", "s-next")]["props"]["status"] == "running"
    assert git(repo, "log", "-1", "--format=%s").strip() == f"run {killed}: abandoned"
    # the archive: written, committed, referenced by its hash, redacted, reproducible
    rel = f"transcripts/{killed}.jsonl.gz"
    data = (repo / rel).read_bytes()
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    assert git(repo, "ls-files", rel).strip() == rel
    finished = [e for e in events(repo) if e["kind"] == "run.finished"
                and e["payload"]["run_id"] == killed]
    assert finished[0]["payload"]["metadata"]["transcript"] == {"uri": rel, "hash": digest}
    assert [(a["uri"], a["hash"]) for a in run["artifacts"]] == [(rel, digest)]
    assert data[4:8] == b"\0\0\0\0"  # gzip mtime 0
    assert data == redacted_archive(read_raw(transcript), Redactor())
    assert SECRET.encode() not in gzip.decompress(data) and b"sleep 600" in gzip.decompress(data)
    checked(repo)
    # the next session goes on; a late replay of the killed session reopens nothing
    before = (repo / "state/events.jsonl").read_bytes()
    hook(repo, dict(base, hook_event_name="PreToolUse", tool_name="Bash",
                    tool_use_id="toolu_k1", tool_input={"command": "sleep 600"}))
    hook(repo, dict(base, hook_event_name="SessionEnd", reason="other"))
    assert (repo / "state/events.jsonl").read_bytes() == before


def test_a_running_agent_keeps_its_run_open(repo):
    """Hooks sent from this (living) process: another session's start closes nothing,
    nor does reconcile."""
    hook(repo, {"session_id": "s-alive", "cwd": str(repo), "hook_event_name": "SessionStart"})
    hook(repo, {"session_id": "s-other", "cwd": str(repo), "hook_event_name": "SessionStart"})
    proc = gasp(repo, "adapt", "claude-code", "reconcile")
    assert proc.returncode == 0 and "still runs; left open" in out(proc), out(proc)
    nodes = fold(repo)["nodes"]
    assert nodes[run_id_for("claude-code", "s-alive")]["props"]["status"] == "running"


def test_an_unknown_agent_is_ended_when_quiet_long_enough(repo):
    from git_gasp.adapters.agent_hook_queue import process
    from git_gasp.adapters.live import gasp_dir
    from git_gasp.adapters.payloads import parse_hook_payload
    from git_gasp.runtime import AgentState

    with AgentState.open(repo, "w") as state:  # recorded with no agent process known
        process(state, parse_hook_payload({"session_id": "s-quiet", "cwd": str(repo),
                                           "hook_event_name": "SessionStart"}),
                gasp_dir(repo), repo)
    start = {"session_id": "s-b", "cwd": str(repo), "hook_event_name": "SessionStart"}
    hook(repo, start)
    quiet = run_id_for("claude-code", "s-quiet")
    assert fold(repo)["nodes"][quiet]["props"]["status"] == "running"
    hook(repo, dict(start, hook_event_name="Stop"), env=dict(os.environ, GASP_SESSION_STALE_S="0"))
    assert fold(repo)["nodes"][quiet]["props"]["outcome"] == "abandoned"
    checked(repo)


def test_a_finished_transcript_closes_with_what_was_lifted(repo, tmp_path):
    transcript = tmp_path / f"{CLAUDE_SID}.jsonl"
    shutil.copy(CLAUDE_TRANSCRIPT, transcript)
    rows = [r for r in rows_of(CLAUDE_HOOKS, repo, transcript_path=str(transcript))
            if r["hook_event_name"] != "SessionEnd"]
    hooks_of_a_gone_agent(repo, rows)
    proc = gasp(repo, "adapt", "claude-code", "reconcile")
    run_id = run_id_for("claude-code", CLAUDE_SID)
    assert proc.returncode == 0 and f"{run_id} finished (promoted)" in out(proc), out(proc)
    run = fold(repo)["nodes"][run_id]
    assert run["props"]["outcome"] == "promoted"
    assert run["props"]["metadata"]["closed_by"] == "reconcile"
    assert "Outcome: promoted" in git(repo, "log", "-1", "--format=%B")
    checked(repo)
    again = gasp(repo, "adapt", "claude-code", "reconcile")
    assert "no open claude-code run to close" in out(again), out(again)


def test_a_codex_session_without_session_end_is_closed_by_reconcile(repo):
    # the payloads' transcript_path is unusable (mangled): the rollout is found by its id
    day = Path(os.environ["HOME"]) / ".codex" / "sessions" / "2026" / "11" / "30"
    day.mkdir(parents=True)
    shutil.copy(CODEX_ROLLOUT, day / f"rollout-2026-11-30T10-00-00-{CODEX_SID}.jsonl")
    rows = [r for r in rows_of(CODEX_HOOKS, repo,
                               transcript_path="/h/.[REDACTED:high_entropy:0a1b2c3d].jsonl")
            if r["hook_event_name"] != "SessionEnd"]
    hooks_of_a_gone_agent(repo, rows)
    run_id = run_id_for("codex", CODEX_SID)
    assert fold(repo)["nodes"][run_id]["props"]["status"] == "running"
    proc = gasp(repo, "adapt", "codex", "reconcile")
    assert proc.returncode == 0, out(proc)
    run = fold(repo)["nodes"][run_id]
    # the rollout ends on task_complete: what was lifted (a patch, never a passing eval)
    assert (run["props"]["status"], run["props"]["outcome"]) == ("finished", "patched")
    assert (repo / f"transcripts/{run_id}.jsonl.gz").exists()
    assert git(repo, "status", "--porcelain") == ""
    checked(repo)


def test_a_codex_session_is_closed_by_the_next_codex_session(repo, tmp_path):
    rollout = tmp_path / f"rollout-x-{CODEX_SID}.jsonl"
    shutil.copy(CODEX_ROLLOUT, rollout)
    rows = [r for r in rows_of(CODEX_HOOKS, repo, transcript_path=str(rollout))
            if r["hook_event_name"] != "SessionEnd"]
    hooks_of_a_gone_agent(repo, rows)
    nxt = dict(rows[0], session_id="01a227f0-0000-7d60-9f50-000000000000",
               transcript_path=str(tmp_path / "rollout-next.jsonl"))
    hook(repo, nxt)
    run = fold(repo)["nodes"][run_id_for("codex", CODEX_SID)]
    assert run["props"]["outcome"] == "patched"
    checked(repo)


def test_replayed_payloads_open_nothing_twice(repo, tmp_path):
    transcript = tmp_path / f"{CLAUDE_SID}.jsonl"
    shutil.copy(CLAUDE_TRANSCRIPT, transcript)
    rows = rows_of(CLAUDE_HOOKS, repo, transcript_path=str(transcript))
    for row in rows:
        hook(repo, row)
    log = (repo / "state/events.jsonl").read_bytes()
    head = git(repo, "rev-parse", "HEAD")
    hook(repo, rows[-1])  # SessionEnd again
    for row in rows:  # and the whole session again
        hook(repo, row)
    assert (repo / "state/events.jsonl").read_bytes() == log
    assert git(repo, "rev-parse", "HEAD") == head
    assert f"{run_id_for('claude-code', CLAUDE_SID)}.2" not in fold(repo)["nodes"]
    checked(repo)


def _feed(repo: Path, rows: list[dict], counts: list[int] | None = None) -> None:
    """Record `rows` in this process, one `process` call each (as the queue does)."""
    from git_gasp.adapters.agent_hook_queue import process
    from git_gasp.adapters.lifting import Lifter
    from git_gasp.adapters.live import gasp_dir
    from git_gasp.adapters.payloads import parse_hook_payload
    from git_gasp.runtime import AgentState

    fed = [0]
    original = Lifter.feed

    def counting(self, rec):
        fed[0] += 1
        return original(self, rec)

    Lifter.feed = counting
    try:
        with AgentState.open(repo, "w") as state:
            for row in rows:
                before = fed[0]
                process(state, parse_hook_payload(row), gasp_dir(repo), repo)
                if counts is not None:
                    counts.append(fed[0] - before)
    finally:
        Lifter.feed = original


def _tool(base: dict, event: str, cmd: str, output: str | None = None, **extra) -> dict:
    row = dict(base, hook_event_name=event, tool_name="Bash", tool_input={"command": cmd},
               **extra)
    if output is not None:
        row["tool_response"] = {"stdout": output, "stderr": "", "interrupted": False}
    return row


def test_tool_calls_without_an_id_get_stable_keys(repo):
    base = {"session_id": "s-noid", "cwd": str(repo), "prompt_id": "p-1"}
    pre = _tool(base, "PreToolUse", "pytest -q")
    failed = dict(_tool(base, "PostToolUseFailure", "pytest -q"),
                  error="Exit code 1\n1 failed in 0.1s")
    passed = _tool(base, "PostToolUse", "pytest -q", "1 passed in 0.1s")
    rows = [dict(base, hook_event_name="SessionStart"),
            dict(base, hook_event_name="UserPromptSubmit", prompt="make the tests pass"),
            pre, pre, failed, failed, pre, passed, passed]
    _feed(repo, rows)
    _feed(repo, rows[1:])  # every payload again, in a later process
    graph = fold(repo)
    calls = [n for n in graph["nodes"].values() if n["kind"] == "tool_call"]
    keys = sorted(n["props"]["metadata"]["source"]["key"] for n in calls)
    assert len(keys) == 2 and keys[0].startswith("tool:p-1:Bash:")
    assert keys[1].startswith(keys[0] + ":")  # the same input again, told apart by its output
    evals = [e["payload"]["status"] for e in events(repo) if e["kind"] == "eval.finished"]
    assert evals == ["Failed", "Passed"]
    checked(repo)


def test_lifting_is_incremental(repo):
    """Each hook feeds the lifting rules only its own records, and the progress file
    stays bounded however long the session runs."""
    base = {"session_id": "s-long", "cwd": str(repo)}
    rows = [dict(base, hook_event_name="SessionStart"),
            dict(base, hook_event_name="UserPromptSubmit", prompt="a long session")]
    for n in range(300):
        cmd = "pytest -q" if n % 50 == 0 else f"echo {n}"
        rows.append(_tool(base, "PreToolUse", cmd, tool_use_id=f"toolu_{n:04d}"))
        rows.append(_tool(base, "PostToolUse", cmd, "1 passed" if n % 50 == 0 else str(n),
                          tool_use_id=f"toolu_{n:04d}"))
    progress = gdir(repo) / "sessions" / "claude-code.s-long.json"
    counts: list[int] = []
    _feed(repo, rows[:302], counts)
    mid = progress.stat().st_size
    _feed(repo, rows[302:], counts)
    assert sum(counts) == 1 + 600 and max(counts) == 1  # every record lifted once
    assert progress.stat().st_size < mid * 1.2
    assert [e["payload"]["status"] for e in events(repo)
            if e["kind"] == "eval.finished"] == ["Passed"] * 6


def _claude_store(home: Path, repo: Path) -> Path:
    name = "".join(c if c.isalnum() else "-" for c in str(repo.resolve()))
    return home / ".claude" / "projects" / name


def test_import_all_rescues_transcripts_not_archived(repo, tmp_path):
    # recorded by hooks while the transcript was unreadable: closed without an archive
    rows = rows_of(CLAUDE_HOOKS, repo, transcript_path=str(tmp_path / "gone.jsonl"))
    for row in rows:
        hook(repo, row)
    run_id = run_id_for("claude-code", CLAUDE_SID)
    assert fold(repo)["nodes"][run_id]["artifacts"] == []
    store = _claude_store(Path(os.environ["HOME"]), repo)
    store.mkdir(parents=True)
    text = CLAUDE_TRANSCRIPT.read_text().replace("/home/dev/app", str(repo))
    (store / f"{CLAUDE_SID}.jsonl").write_text(text)
    proc = gasp(repo, "import", "claude-code", "--all")
    assert proc.returncode == 0 and "transcript archived to" in out(proc), out(proc)
    rel = f"transcripts/{run_id}.jsonl.gz"
    run = fold(repo)["nodes"][run_id]
    data = (repo / rel).read_bytes()
    assert [(a["uri"], a["hash"]) for a in run["artifacts"]] == [
        (rel, "sha256:" + hashlib.sha256(data).hexdigest())]
    assert git(repo, "status", "--porcelain") == ""
    checked(repo)
    head = git(repo, "rev-parse", "HEAD")
    again = gasp(repo, "import", "claude-code", "--all")
    assert again.returncode == 0 and "nothing added" in out(again), out(again)
    assert git(repo, "rev-parse", "HEAD") == head and (repo / rel).read_bytes() == data


def test_agent_process_and_liveness():
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)
    try:
        me = agent_process(child.pid)
        if me is None:
            pytest.skip("no /proc here: liveness is unknown, quiet time decides")
        assert me["pid"] == child.pid and alive(me) is True
    finally:
        child.communicate(b"")
    assert alive(me) is False
    assert alive(dict(me, start=me["start"] + 1)) is False and alive(None) is None


def test_progress_of_an_older_version_is_taken_over(repo):
    """A progress file that listed every record (before lifting was incremental)."""
    base = {"session_id": "s-old", "cwd": str(repo)}
    _feed(repo, [dict(base, hook_event_name="SessionStart")])
    progress = gdir(repo) / "sessions" / "claude-code.s-old.json"
    run_id = run_id_for("claude-code", "s-old")
    old = {"run_id": run_id, "cwd": str(repo), "emitted": [], "node_of": {}, "event_of": {},
           "records": [{"kind": "tool_use", "key": "toolu_o1", "parent": None, "ts_ms": None,
                        "data": {"tool_use_id": "toolu_o1", "name": "Bash",
                                 "input": {"command": "pytest -q"}}, "line": 0}]}
    progress.write_text(json.dumps(old))
    _feed(repo, [dict(_tool(base, "PostToolUseFailure", "pytest -q", tool_use_id="toolu_o1"),
                      error="Exit code 1\n1 failed")])
    assert [e["payload"]["status"] for e in events(repo) if e["kind"] == "eval.finished"] == [
        "Failed"]
    assert "lifter" in json.loads(progress.read_text())


def test_session_end_of_a_closed_run_opens_nothing_without_its_progress(repo):
    base = {"session_id": "s-gone", "cwd": str(repo)}
    _feed(repo, [dict(base, hook_event_name="SessionStart"),
                 dict(base, hook_event_name="SessionEnd", reason="other")])
    shutil.rmtree(gdir(repo) / "sessions")
    before = (repo / "state/events.jsonl").read_bytes()
    _feed(repo, [dict(base, hook_event_name="SessionEnd", reason="other")])
    assert (repo / "state/events.jsonl").read_bytes() == before
