"""Claude Code transcripts and Codex rollouts from outside: hostile atoms in every hole
of their lines are read (what cannot be read is skipped or a one-line GaspError), never
another exception (an internal error of `git gasp import`)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_gasp.adapters.claude_code import parse_transcript
from git_gasp.adapters.codex import parse_rollout
from git_gasp.base.errors import GaspError

pytestmark = pytest.mark.slow  # hypothesis

ATOMS = ["Infinity", "NaN", "9" * 5000, "1e999", "[]", "{}", "null", "true", "1", '"x"',
         "[" * 3000 + "]" * 3000, '"\\ud83d"', '[{"type": "tool_result"}]',
         '[{"type": "tool_use", "id": 5}]', '[{"type": "text", "text": 7}]', '"2026-13-45"',
         '{"content": 5}', '{"role": "user", "content": [null, 1, "x"]}',
         '[{"type": "tool_result", "tool_use_id": "t", "content": "Exit code ' + "9" * 5000
         + '"}]']
atom = st.one_of(st.sampled_from(ATOMS), st.integers().map(str))
CLAUDE = ('{{"type":{0},"uuid":{1},"parentUuid":{2},"timestamp":{3},"sessionId":{4},'
          '"message":{{"role":{5},"id":{6},"model":{7},"content":{8},"usage":{9}}}}}')
CODEX = ('{{"timestamp":{0},"type":{1},"payload":{{"type":{2},"id":{3},"cwd":{4},'
         '"name":{5},"arguments":{6},"call_id":{7},"output":{8},"content":{9}}}}}')
FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _reads_or_refuses(parse, data: bytes) -> None:
    try:
        parse(data)
    except GaspError:
        pass
    except Exception as exc:  # noqa: BLE001 - the point of the test
        pytest.fail(f"{parse.__name__} raised {type(exc).__name__}: {str(exc)[:200]}")


@FUZZ
@given(st.lists(st.lists(atom, min_size=10, max_size=10), min_size=1, max_size=3))
def test_claude_code_transcripts(lines):
    data = "\n".join(CLAUDE.format(*h) for h in lines).encode("utf-8", "surrogatepass")
    _reads_or_refuses(parse_transcript, data)


@FUZZ
@given(st.lists(st.lists(atom, min_size=10, max_size=10), min_size=1, max_size=3))
def test_codex_rollouts(lines):
    data = "\n".join(CODEX.format(*h) for h in lines).encode("utf-8", "surrogatepass")
    _reads_or_refuses(parse_rollout, data)


def test_an_exit_code_of_5000_digits_is_no_exit_code():
    """``int()`` refused the digits (ValueError), an internal error of the import."""
    line = {"type": "user", "uuid": "u1", "sessionId": "s", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t", "content": "Exit code " + "9" * 5000}]}}
    transcript = parse_transcript(json.dumps(line).encode())
    assert [r.get("exit_code") for r in transcript.records if r.kind == "tool_result"] == [None]
