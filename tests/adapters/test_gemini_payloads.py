"""Gemini CLI 0.61.0's hook payloads, as a live session sent them, read into the neutral
events and recorded through the one path (queue → drainer → run), twice: the second
replay adds nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_gasp.adapters.agent_hook import entry
from git_gasp.adapters.agent_hook.queue_files import queued
from git_gasp.adapters.dialects import gemini
from git_gasp.adapters.payloads import parse_hook_payload
from tests.adapters.samples import DATA, read_jsonl, replay_session, spine_of
from tests.testing.run import gasp, git, out

GEMINI_HOOKS = DATA / "gemini-0.61.0" / "hook-payloads.jsonl"
MODEL = "gemini-2.5-pro"


def _gdir(repo: Path) -> Path:
    return Path(git(repo, "rev-parse", "--absolute-git-dir").strip()) / "gasp"


def test_each_event_reads_as_its_neutral_event():
    hooks = [parse_hook_payload(row, "gemini") for row in read_jsonl(GEMINI_HOOKS)]
    assert {h.agent for h in hooks} == {"gemini"}
    events = [h.event for h in hooks]
    assert events[:3] == ["SessionStart", "UserPromptSubmit", "ModelRequest"]
    assert events[-2:] == ["Stop", "SessionEnd"]
    assert events.count("PreToolUse") == events.count("PostToolUse") == 6
    assert events.count("ModelRequest") == events.count("ModelResponse") == 7
    assert {h.model for h in hooks if h.event.startswith("Model")} == {MODEL}
    results = [h for h in hooks if h.event == "PostToolUse"]
    shells = [h for h in results if h.tool_name == "run_shell_command"]
    assert [(h.is_error, h.exit_code) for h in shells] == [(True, 1), (False, None),
                                                         (False, None)]
    assert "1 failed" in shells[0].output and "<untrusted_context>" not in shells[0].output
    assert hooks[1].prompt == hooks[-2].raw["prompt"]
    assert hooks[-2].last_message == "Fixed add() and committed; the test passes."
    assert hooks[0].reason == "startup" and hooks[-1].reason == "exit"


def test_a_chunk_before_the_last_ends_no_call():
    rows = read_jsonl(GEMINI_HOOKS)
    last = next(r for r in rows if r["hook_event_name"] == "AfterModel")
    assert gemini.model_response(last)["stop_reason"] == "STOP"
    chunk = json.loads(json.dumps(last))
    del chunk["llm_response"]["candidates"][0]["finishReason"]
    assert gemini.model_response(chunk) is None


def test_the_transcript_says_when_the_turn_finished():
    data = (DATA / "gemini-0.61.0" / "session-transcript.jsonl").read_bytes()
    assert gemini.turn_finished(data)
    lines = data.splitlines(keepends=True)
    last = max(i for i, line in enumerate(lines) if b'"type":"gemini"' in line)
    assert not gemini.turn_finished(b"".join(lines[:last]))  # ends on a tool call
    assert not gemini.turn_finished(b"")


def test_a_failed_tool_and_an_unknown_response():
    assert gemini.tool_result({"llmContent": "x", "returnDisplay": "shown",
                               "error": {"message": "no such file"}}) == {
        "stdout": "shown\nno such file", "is_error": True}
    assert gemini.tool_result("plain") == {"stdout": "plain", "is_error": False}


def test_the_hook_leaves_a_streamed_chunk_unqueued(agent):
    row = next(r for r in read_jsonl(GEMINI_HOOKS) if r["hook_event_name"] == "AfterModel")
    row = dict(row, cwd=str(agent))
    chunk = json.loads(json.dumps(row))
    del chunk["llm_response"]["candidates"][0]["finishReason"]
    entry.run(json.dumps(chunk).encode(), "gemini", str(agent))
    assert queued(str(_gdir(agent))) == []


@pytest.mark.slow
def test_the_session_replays_into_a_conformant_run_once(agent):
    rows = [dict(row, cwd=str(agent)) for row in read_jsonl(GEMINI_HOOKS)]
    events = replay_session(agent, "gemini", rows)
    log = (agent / "state/events.jsonl").read_bytes()
    kinds = [e["kind"] for e in events]
    assert kinds.count("model.called") == kinds.count("model.finished") == 7
    assert {e["payload"]["model"] for e in events if e["kind"] == "model.called"} == {MODEL}
    assert kinds.count("tool.called") == kinds.count("tool.finished") == 6
    assert spine_of(events) == (["Failed", "Passed"], "promoted")
    check = gasp(agent, "check")
    assert check.returncode == 0, out(check)
    replay_session(agent, "gemini", rows)  # every payload again: nothing added
    assert (agent / "state/events.jsonl").read_bytes() == log
