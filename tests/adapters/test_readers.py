"""Transcript/rollout readers and hook payload parsing, on the real recorded sessions."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess

import pytest

from git_gasp.adapters import claude_code, codex
from git_gasp.adapters.payloads import HOOK_EVENTS, detect_agent, parse_hook_payload
from git_gasp.adapters.records import (
    ASSISTANT_TEXT,
    MODEL_RESPONSE,
    TOOL_RESULT,
    TOOL_USE,
    USER_PROMPT,
    read_raw,
)
from git_gasp.base.errors import GaspError
from tests.adapters.samples import (
    CLAUDE_HOOKS,
    CLAUDE_TRANSCRIPT,
    CODEX_HOOKS,
    CODEX_ROLLOUT,
    read_jsonl,
    write_jsonl,
)

PROMPT = "Fix the add function so the test passes, then commit"


def kinds(t) -> list[str]:
    return [r.kind for r in t.records]


# -- Claude Code ---------------------------------------------------------------------


def test_claude_transcript_records_and_session_facts():
    t = claude_code.read_transcript(CLAUDE_TRANSCRIPT)
    s = t.session
    assert (s.agent, s.agent_version, s.session_id) == (
        "claude-code", "2.1.328", "6f48f32c-63b8-44c3-9f60-37aed18fbcf2")
    assert (s.cwd, s.git_branch, s.model) == ("/home/dev/app", "main", "claude-opus-5-5")
    assert t.warnings == []
    # 13 assistant lines are 7 API responses: deduplicated on message.id
    responses = t.by_kind(MODEL_RESPONSE)
    assert len(responses) == 7
    assert len({r.key for r in responses}) == 7
    assert all(r.data["usage"]["input_tokens"] == 10 for r in responses)
    assert [r.data["stop_reason"] for r in responses] == ["tool_use"] * 6 + ["end_turn"]
    uses = t.by_kind(TOOL_USE)
    assert [u.data["name"] for u in uses] == ["Write", "Write", "Bash", "Edit", "Bash", "Bash"]
    assert uses[0].data["input"]["file_path"] == "/home/dev/app/calc.py"
    results = t.by_kind(TOOL_RESULT)
    assert [r.data["is_error"] for r in results] == [False, False, True, False, False, False]
    assert results[2].data["exit_code"] == 1 and "1 failed" in results[2].data["output"]
    assert results[-1].data["output"] == "25b87ee Fix add"
    assert [p.data["text"] for p in t.by_kind(USER_PROMPT)] == [PROMPT]
    assert t.by_kind(ASSISTANT_TEXT)[-1].data["text"].startswith("Fixed add()")


def test_claude_unknown_line_types_are_skipped_and_counted():
    t = claude_code.read_transcript(CLAUDE_TRANSCRIPT)
    assert t.skipped["attachment"] == 10 and t.skipped["api-request"] == 7
    assert t.skipped["cost-state"] == 1 and t.skipped["queue-operation"] == 2
    assert sum(t.skipped.values()) + 13 + 7 == t.line_count  # every line accounted for


def test_claude_causation_follows_parent_uuid_through_skipped_lines():
    t = claude_code.read_transcript(CLAUDE_TRANSCRIPT)
    idx = t.index()
    prompt = t.by_kind(USER_PROMPT)[0]
    first = t.by_kind(MODEL_RESPONSE)[0]
    # the first response's parentUuid chain runs through 9 attachment lines to the prompt
    assert prompt.parent is None and first.parent == prompt.key
    for rec in t.records:
        if rec.kind in (TOOL_USE, ASSISTANT_TEXT):
            assert idx[rec.parent].kind == MODEL_RESPONSE
        if rec.kind == TOOL_RESULT:
            assert rec.parent == rec.data["tool_use_id"] and idx[rec.parent].kind == TOOL_USE
        if rec.kind == MODEL_RESPONSE and rec is not first:
            assert idx[rec.parent].kind == TOOL_RESULT
    # parents always come earlier in the list (a causal order)
    pos = {r.key: i for i, r in enumerate(t.records)}
    assert all(r.parent is None or pos[r.parent] < pos[r.key] for r in t.records)


def test_claude_response_split_over_lines_keeps_the_last_usage(tmp_path):
    rows = read_jsonl(CLAUDE_TRANSCRIPT)
    # the second line of the first response reports the final output token count
    rows[19]["message"]["usage"] = dict(rows[19]["message"]["usage"], output_tokens=99)
    t = claude_code.read_transcript(write_jsonl(tmp_path / "t.jsonl", rows))
    assert t.by_kind(MODEL_RESPONSE)[0].data["usage"]["output_tokens"] == 99


def test_claude_garbage_and_other_versions_never_fail(tmp_path):
    raw = CLAUDE_TRANSCRIPT.read_bytes().replace(b'"version":"2.1.328"', b'"version":"2.2.0"')
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"not json\n[1,2]\n" + raw + b'{"type":"brand-new","x":1}\n{"trunc')
    t = claude_code.read_transcript(path)
    assert len(t.by_kind(MODEL_RESPONSE)) == 7
    assert t.skipped["<not json>"] == 3 and t.skipped["brand-new"] == 1
    assert t.warnings and "2.2.0" in t.warnings[0]


def test_compressed_transcripts_read_the_same(tmp_path):
    plain = claude_code.read_transcript(CLAUDE_TRANSCRIPT)
    gz = tmp_path / "t.jsonl.gz"
    gz.write_bytes(gzip.compress(CLAUDE_TRANSCRIPT.read_bytes()))
    assert [r.key for r in claude_code.read_transcript(gz).records] == [
        r.key for r in plain.records]
    zst = tmp_path / "rollout.jsonl.zst"
    try:
        import zstandard

        zst.write_bytes(zstandard.ZstdCompressor().compress(CODEX_ROLLOUT.read_bytes()))
    except ImportError:
        if shutil.which("zstd") is None:
            pytest.skip("neither the zstandard package nor the zstd program is installed")
        subprocess.run(["zstd", "-q", "-o", str(zst), str(CODEX_ROLLOUT)], check=True)
    assert read_raw(zst) == CODEX_ROLLOUT.read_bytes()
    assert [r.key for r in codex.read_rollout(zst).records] == [
        r.key for r in codex.read_rollout(CODEX_ROLLOUT).records]


def test_unreadable_files_are_one_line_errors(tmp_path):
    with pytest.raises(GaspError, match="cannot read"):
        claude_code.read_transcript(tmp_path / "missing.jsonl")
    bad = tmp_path / "bad.jsonl.zst"
    bad.write_bytes(b"definitely not zstd")
    with pytest.raises(GaspError):
        codex.read_rollout(bad)


# -- Codex ---------------------------------------------------------------------------


def test_codex_rollout_records_and_session_facts():
    t = codex.read_rollout(CODEX_ROLLOUT)
    s = t.session
    assert (s.agent, s.agent_version, s.session_id) == (
        "codex", "0.171.0", "01a227f0-ba53-7d60-9f50-1d95813560bb")
    assert (s.cwd, s.git_branch, s.model) == ("/home/dev/app2", "main", "mock-model")
    assert s.git_commit == "1bd1f2052f47fab51fccd1887ad0410ea6c6eb57"
    # the harness's <environment_context> and developer messages are not prompts
    assert [p.data["text"] for p in t.by_kind(USER_PROMPT)] == [PROMPT]
    responses = t.by_kind(MODEL_RESPONSE)
    assert [r.key for r in responses][:2] == ["resp_17471f7f31fb", "resp_556e8d88465c"]
    assert len(responses) == 7 and all(r.data["model"] == "mock-model" for r in responses)
    assert all(r.data["usage"]["total_tokens"] == 15 for r in responses)
    cmds = [u.data["input"]["cmd"] for u in t.by_kind(TOOL_USE)]
    assert cmds[2] == "python3 -m pytest -q test_calc.py" and "git add" in cmds[-1]
    results = t.by_kind(TOOL_RESULT)
    assert [r.data["exit_code"] for r in results] == [0, 0, 1, 0, 1, 0]
    assert results[2].data["is_error"] and "No module named pytest" in results[2].data["output"]
    assert results[-1].data["output"] == "aa3392c Fix add\n"  # Codex's preamble stripped
    assert t.skipped["world_state"] == 1 and t.warnings == []


def test_codex_causation_is_positional():
    t = codex.read_rollout(CODEX_ROLLOUT)
    idx = t.index()
    assert kinds(t)[:4] == [USER_PROMPT, MODEL_RESPONSE, TOOL_USE, TOOL_RESULT]
    prev = None
    for rec in t.records:
        if rec.kind == MODEL_RESPONSE:
            assert rec.parent == prev.key  # the prompt or result it answered
        elif rec.kind in (TOOL_USE, ASSISTANT_TEXT):
            assert idx[rec.parent].kind == MODEL_RESPONSE
        elif rec.kind == TOOL_RESULT:
            assert rec.parent == rec.data["tool_use_id"]
        prev = rec


def test_codex_without_usage_records_falls_back_to_token_count(tmp_path):
    rows = [r for r in read_jsonl(CODEX_ROLLOUT) if r["type"] != "token_usage_record"]
    rows.append({"type": "mystery", "payload": {}})
    t = codex.read_rollout(write_jsonl(tmp_path / "r.jsonl", rows))
    responses = t.by_kind(MODEL_RESPONSE)
    assert len(responses) == 7 and all(r.key.startswith("resp@") for r in responses)
    assert all(r.data["usage"]["output_tokens"] == 5 for r in responses)
    assert t.skipped["mystery"] == 1


def test_codex_exit_code_lookup_for_hooks():
    assert codex.exit_code_for(CODEX_ROLLOUT, "call_f17e48b9b339") == 1
    assert codex.exit_code_for(CODEX_ROLLOUT, "call_905df1fa854c") == 0
    assert codex.exit_code_for(CODEX_ROLLOUT, "call_nope") is None
    assert codex.exit_code_for("/nonexistent/rollout.jsonl", "x") is None


# -- hook payloads -------------------------------------------------------------------


@pytest.mark.parametrize(("path", "agent"), [(CLAUDE_HOOKS, "claude-code"), (CODEX_HOOKS, "codex")])
def test_every_recorded_hook_payload_parses(path, agent):
    events = [parse_hook_payload(json.dumps(p)) for p in read_jsonl(path)]
    assert {e.agent for e in events} == {agent}
    assert {e.event for e in events} <= set(HOOK_EVENTS)
    assert events[0].event == "SessionStart" and events[-1].event == "SessionEnd"
    assert events[1].prompt == PROMPT
    tools = [e for e in events if e.event.startswith("Post")]
    assert len(tools) == 6 and all(e.tool_use_id for e in tools)
    stop = [e for e in events if e.event == "Stop"][0]
    assert stop.last_message == "Fixed add() and committed; the test passes."


def test_claude_hook_failure_and_outputs():
    events = [parse_hook_payload(json.dumps(p)) for p in read_jsonl(CLAUDE_HOOKS)]
    fail = [e for e in events if e.event == "PostToolUseFailure"]
    assert len(fail) == 1 and fail[0].is_error and fail[0].exit_code == 1
    assert fail[0].tool_input["command"].startswith("python3 -m pytest")
    ok = [e for e in events if e.event == "PostToolUse"]
    assert all(e.is_error is False for e in ok)
    assert ok[-1].output == "25b87ee Fix add"


def test_codex_hook_outputs_leave_errors_to_the_rollout():
    events = [parse_hook_payload(json.dumps(p)) for p in read_jsonl(CODEX_HOOKS)]
    posts = [e for e in events if e.event == "PostToolUse"]
    assert all(e.is_error is None for e in posts)
    assert posts[2].output == "/usr/bin/python3: No module named pytest\n"
    assert posts[0].tool_name == "Bash" and posts[0].model == "mock-model"


@pytest.mark.parametrize(
    ("data", "msg"),
    [
        (b"", "not JSON"),
        (b"[1]", "not a JSON object"),
        (b'{"session_id": "s"}', "no hook_event_name"),
        (b'{"hook_event_name": "Stop"}', "no session_id"),
    ],
)
def test_bad_hook_payloads_are_one_line_errors(data, msg):
    with pytest.raises(GaspError, match=msg):
        parse_hook_payload(data)


def test_agent_detection_and_override():
    assert detect_agent({"transcript_path": "/h/.codex/sessions/2026/rollout-x.jsonl"}) == "codex"
    assert detect_agent({"transcript_path": "/h/.claude/projects/p/s.jsonl"}) == "claude-code"
    h = parse_hook_payload({"hook_event_name": "Stop", "session_id": "s"}, agent="codex")
    assert h.agent == "codex"
    with pytest.raises(GaspError, match="unknown agent"):
        parse_hook_payload({"hook_event_name": "Stop", "session_id": "s"}, agent="no-such-agent")
