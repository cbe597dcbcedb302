"""The capture rules hold for every stored field of a hook-recorded session: tool
responses, observations and lifted events as well as tool inputs; and an observation
reads as one line, its structured detail bounded beside it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_gasp.adapters.live import run_hook
from tests.adapters.samples import CLAUDE_HOOKS, read_jsonl

pytestmark = pytest.mark.slow  # each test replays a whole session through the hooks

MARKER = "planted marker line of the capture test"
PLANTED = f"def add(a, b):\n    # {MARKER}\n    return a - b\n"
FIXED = PLANTED.replace("a - b", "a + b")


def planted_rows(repo: Path) -> list[dict]:
    """The sample session, its calc.py carrying a marker line (not its first) in what
    the agent writes, in the file the edit changes and in the edit's patch."""
    rows = read_jsonl(CLAUDE_HOOKS)
    for row in rows:
        row["cwd"] = str(repo)
        inp, resp = row.get("tool_input") or {}, row.get("tool_response")
        if str(inp.get("file_path", "")).endswith("/calc.py"):
            if row.get("tool_name") == "Write":
                inp["content"] = PLANTED
                if isinstance(resp, dict):
                    resp["content"] = PLANTED
            elif isinstance(resp, dict):  # the Edit's response: the file, its patch
                resp["originalFile"] = PLANTED
                resp["structuredPatch"] = [{"oldStart": 1, "oldLines": 3, "newStart": 1,
                                            "newLines": 3, "lines": [
                                                " def add(a, b):", f"     # {MARKER}",
                                                "-    return a - b", "+    return a + b"]}]
    return rows


def record(repo: Path, rows: list[dict]) -> list[str]:
    for row in rows:
        what = run_hook(json.dumps(row).encode(), agent="claude-code", repo=str(repo))
        assert what.startswith("recorded"), what
    return (repo / "state/events.jsonl").read_text().splitlines()


def capture(repo: Path, **settings: object) -> None:
    lines = "".join(f"{k} = {json.dumps(v)}\n" for k, v in settings.items())
    config = repo / ".agent/config.toml"
    config.write_text(config.read_text() + "\n[capture]\n" + lines if config.exists()
                      else "[capture]\n" + lines)


def observations(lines: list[str]) -> list[dict]:
    return [e["payload"] for e in map(json.loads, lines) if e["kind"] == "observation.created"]


def test_under_digest_no_event_holds_a_file_line(agent):
    lines = record(agent, planted_rows(agent))
    assert not [line for line in lines if MARKER in line]
    # the Write's and the Edit's responses are kept beside their observations, as digests
    details = [o["metadata"]["detail"] for o in observations(lines)
               if o["metadata"].get("detail", {}).get("tool") in ("Write", "Edit")]
    assert len(details) == 3
    written = details[0]["response"]
    assert written["content"].startswith(f"<{len(PLANTED.encode())} bytes, sha256 ")
    edited = details[2]["response"]
    assert edited["originalFile"].startswith("<") and isinstance(
        edited["structuredPatch"], str)


def test_with_full_file_inputs_the_file_is_kept(agent):
    capture(agent, file_inputs="full")
    lines = record(agent, planted_rows(agent))
    assert [line for line in lines if MARKER in line]  # what the digest keeps out


def test_observations_read_as_one_line_with_detail_beside(agent):
    lines = record(agent, planted_rows(agent))
    obs = [o for o in observations(lines) if o["metadata"].get("detail")]
    summaries = [o["summary"] for o in obs]
    assert len(summaries) == 6
    assert all("\n" not in s and not s.lstrip().startswith(("{", "[")) for s in summaries)
    assert summaries[0].startswith("Write ok, ") and summaries[0].endswith("calc.py")
    assert summaries[2].startswith("Bash failed (exit 1), ")
    assert summaries[5] == "Bash ok, 15 B: 25b87ee Fix add"
    detail = obs[2]["metadata"]["detail"]
    assert detail["success"] is False and detail["exit_code"] == 1 and detail["bytes"] > 0
    assert "short test summary info" in detail["output"]


def test_every_field_is_bounded(agent):
    capture(agent, field_limit=256, tool_output="full")
    rows = planted_rows(agent)
    long_command = "python3 -m pytest -q test_calc.py " + " ".join(
        f"--opt{i}" for i in range(400))
    for row in rows:
        if row.get("tool_name") == "Bash" and "pytest" in str(row["tool_input"]):
            row["tool_input"]["command"] = long_command
        resp = row.get("tool_response")
        if isinstance(resp, dict) and "stdout" in resp:
            resp["stdout"] = "x" * 20000 + "\n1 passed in 0.45s"
            resp["extra"] = ["y" * 5000] * 50
    lines = record(agent, rows)
    events = [json.loads(line) for line in lines]

    def strings(value):
        if isinstance(value, str):
            yield value
        elif isinstance(value, dict):
            for v in value.values():
                yield from strings(v)
        elif isinstance(value, list):
            for v in value:
                yield from strings(v)

    assert max(len(s.encode()) for e in events for s in strings(e["payload"])) <= 256
    evals = [e["payload"] for e in events if e["kind"] == "eval.finished"]
    assert evals and all(e["metadata"]["cut"]["command"]["bytes"] > 256 for e in evals)
    details = [o["metadata"]["detail"] for o in observations(lines)
               if o["metadata"].get("detail", {}).get("tool") == "Bash"]
    assert all(len(json.dumps(d["response"]).encode()) <= 256 + 200 for d in details
               if "response" in d)


def test_with_no_tool_output_no_output_is_stored(agent):
    capture(agent, tool_output="none")
    lines = record(agent, planted_rows(agent))
    assert not [line for line in lines if "25b87ee Fix add" in line or
                "short test summary" in line]
    failure = next(json.loads(line)["payload"] for line in lines
                   if json.loads(line)["kind"] == "failure.observed")
    assert failure["summary"].endswith("` failed")
