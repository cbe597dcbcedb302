"""Claude Code transcript import is linear in the transcript: counted in function calls
(the interpreter's profile events, the same on every machine), never in seconds."""

from __future__ import annotations

import json
import sys

import pytest

from git_gasp.adapters.claude_code import parse_transcript


def transcript(turns: int) -> bytes:
    """`turns` turns: a prompt, a tool call, its result (with a text block beside it)."""
    lines = []
    for i in range(turns):
        lines.append({"type": "user", "uuid": f"u{i}", "parentUuid": f"r{i-1}" if i else None,
                      "timestamp": "2026-01-01T00:00:00Z", "sessionId": "s",
                      "message": {"role": "user", "content": f"do thing {i}"}})
        lines.append({"type": "assistant", "uuid": f"a{i}", "parentUuid": f"u{i}",
                      "timestamp": "2026-01-01T00:00:01Z", "sessionId": "s",
                      "message": {"id": f"m{i}", "role": "assistant", "model": "x",
                                  "content": [{"type": "tool_use", "id": f"t{i}", "name": "Bash",
                                               "input": {"command": "ls"}}]}})
        lines.append({"type": "user", "uuid": f"r{i}", "parentUuid": f"a{i}",
                      "timestamp": "2026-01-01T00:00:02Z", "sessionId": "s",
                      "message": {"role": "user", "content": [
                          {"type": "tool_result", "tool_use_id": f"t{i}", "content": "ok"},
                          {"type": "text", "text": "note"}]}})
    return "".join(json.dumps(x) + "\n" for x in lines).encode()

def calls(turns: int) -> tuple[int, int]:
    """(function calls made parsing a transcript of `turns` turns, records read)."""
    data = transcript(turns)
    n = [0]
    def prof(frame, event, arg):
        if event == "call":
            n[0] += 1
    sys.setprofile(prof)
    try:
        t = parse_transcript(data)
    finally:
        sys.setprofile(None)
    return n[0], len(t.records)



@pytest.mark.slow  # parses 15,000 turns under the profiler: a scale test, not a unit
def test_import_work_grows_linearly_from_1k_to_8k_turns():
    small, big = calls(1000), calls(8000)
    assert (small[1], big[1]) == (4000, 32000)  # four records a turn
    assert big[0] <= 9 * small[0], f"8x the turns cost {big[0] / small[0]:.1f}x the calls"
