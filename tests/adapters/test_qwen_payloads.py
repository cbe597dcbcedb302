"""Qwen Code 0.24.4's hook payloads and transcript, as a live session wrote them: read
into the neutral events, its model calls from the transcript, and the session recorded
through the one path (queue → drainer → reconcile) once."""

from __future__ import annotations

import json
import shutil

import pytest

from git_gasp.adapters.dialects import qwen
from git_gasp.adapters.payloads import parse_hook_payload
from git_gasp.adapters.records import response_texts
from tests.adapters.samples import DATA, read_jsonl, replay_session, spine_of
from tests.testing.run import gasp, out

QWEN_DIR = DATA / "qwen-code-0.24.4"
QWEN_HOOKS = QWEN_DIR / "hook-payloads.jsonl"
QWEN_TRANSCRIPT = QWEN_DIR / "session-transcript.jsonl"
MODEL = "qwen3-coder-plus"


def test_each_event_reads_as_its_neutral_event():
    hooks = [parse_hook_payload(row, "qwen-code") for row in read_jsonl(QWEN_HOOKS)]
    events = [h.event for h in hooks]
    assert events[0] == "SessionStart" and events[-1] == "Stop"
    assert hooks[0].model == MODEL
    assert events.count("PreToolUse") == 6 and events.count("UserPromptSubmit") == 7
    failed = [h for h in hooks if h.event == "PostToolUseFailure"]
    assert [(h.is_error, h.exit_code, h.tool_name) for h in failed] == [
        (True, 1, "run_shell_command")]
    done = [h for h in hooks if h.event == "PostToolUse"]
    assert all(h.is_error is False for h in done)
    assert done[-1].output.endswith("Fix add") and "llmContent" not in done[0].output
    assert {h.tool_use_id is not None for h in hooks if h.tool_name} == {True}


def test_the_transcript_lists_its_model_calls():
    data = QWEN_TRANSCRIPT.read_bytes()
    t = qwen.parse_transcript(data)
    calls = t.by_kind("model_response")
    assert [c.get("model") for c in calls] == [MODEL] * 7
    assert [c.get("stop_reason") for c in calls] == ["tool_calls"] * 6 + ["stop"]
    assert response_texts(t.records)[calls[-1].key] == (
        "Fixed add() and committed; the test passes.")
    assert qwen.turn_finished(data) and not qwen.turn_finished(data.rsplit(b"\n", 3)[0])


@pytest.mark.slow
def test_the_session_replays_into_a_conformant_run_once(agent, tmp_path):
    transcript = shutil.copy(QWEN_TRANSCRIPT, tmp_path / "session.jsonl")
    rows = [dict(r, cwd=str(agent), transcript_path=str(transcript))
            for r in read_jsonl(QWEN_HOOKS)]
    replay_session(agent, "qwen-code", rows)
    proc = gasp(agent, "adapt", "qwen-code", "reconcile")  # no SessionEnd came
    assert proc.returncode == 0, out(proc)
    log = (agent / "state/events.jsonl").read_bytes()
    events = [json.loads(line) for line in log.splitlines()]
    kinds = [e["kind"] for e in events]
    assert kinds.count("model.called") == kinds.count("model.finished") == 7
    assert {e["payload"]["model"] for e in events if e["kind"] == "model.called"} == {MODEL}
    assert kinds.count("tool.called") == kinds.count("tool.finished") == 6
    assert kinds.count("goal.created") == 1 and kinds.count("task.created") == 0
    assert spine_of(events) == (["Failed", "Passed"], "promoted")
    started = next(e for e in events if e["kind"] == "run.started")
    assert started["payload"]["metadata"]["model"] == MODEL
    check = gasp(agent, "check")
    assert check.returncode == 0, out(check)
    replay_session(agent, "qwen-code", rows)  # every payload again: nothing added
    assert (agent / "state/events.jsonl").read_bytes() == log
