"""Bounded capture: `[capture]` in .agent/config.toml decides how much of a tool's output
and input the log keeps; with the defaults no event line reaches 32 KiB, whatever a tool
prints, and a cut field keeps its full length and sha256."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.adapters.samples import CLAUDE_HOOKS, CLAUDE_TRANSCRIPT, read_jsonl
from tests.testing.run import gasp, git, out

BIG = "".join(f"line {i} of a very verbose test run\n" for i in range(9000))  # ~300 KB
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


@pytest.fixture
def bot(tmp_path) -> Path:
    assert gasp(tmp_path, "init", "bot").returncode == 0
    return tmp_path / "bot"


def _configure(bot: Path, text: str) -> None:
    config = bot / ".agent" / "config.toml"
    config.write_text(config.read_text() + "\n[capture]\n" + text)
    git(bot, "commit", "-qam", "capture settings")


def _replay(bot: Path, stdout: str = BIG, content: str = BIG) -> None:
    for row in read_jsonl(CLAUDE_HOOKS):
        row["cwd"] = str(bot)
        if row.get("tool_name") == "Bash" and row.get("hook_event_name") == "PostToolUse":
            row["tool_response"]["stdout"] = stdout
        if row.get("tool_name") == "Write":
            row["tool_input"]["content"] = content
        proc = subprocess.run(["git", "gasp", "adapt", "hook"], cwd=bot,
                              input=json.dumps(row).encode(), capture_output=True)
        assert proc.returncode == 0, out(proc)


def _events(bot: Path) -> list[dict]:
    return [json.loads(line) for line in (bot / "state" / "events.jsonl").open()]


def _calls(bot: Path) -> dict:
    nodes = json.loads(gasp(bot, "fold", "--json").stdout)["nodes"]
    return {n["id"]: n for n in nodes.values() if n["kind"] == "tool_call"}


@pytest.mark.slow  # replays a whole Claude Code session, a hook process per event
def test_defaults_keep_every_line_small_and_note_what_they_cut(bot):
    _replay(bot)
    lines = (bot / "state" / "events.jsonl").read_bytes().splitlines()
    assert max(map(len, lines)) < 32 * 1024
    assert BIG[:2000].encode() not in b"".join(lines)
    writes = [n for n in _calls(bot).values() if n["props"]["tool"] == "Write"]
    # the hook digests what reached it: a payload string's first and last 8 KiB
    assert writes and all(re.search(r'"content": "<\d{5} bytes, sha256 [0-9a-f]{12}>: line 0 ',
                                    n["props"]["input_summary"]) for n in writes), writes
    finished = [e for e in _events(bot) if e["kind"] == "tool.finished"
                and "cut" in e["payload"]["metadata"]]
    assert finished, "the cut output is noted"
    note = finished[0]["payload"]["metadata"]["cut"]["output_summary"]
    assert note["bytes"] >= 4000  # what reached the writer (the hook keeps head and tail)
    assert len(note["sha256"]) == 64
    assert gasp(bot, "check").returncode == 0


@pytest.mark.slow
def test_a_secret_at_the_cut_is_redacted_whole_not_split(bot):
    _replay(bot, stdout="x" * 479 + " " + TOKEN + "\n" + BIG)
    log = (bot / "state" / "events.jsonl").read_text()
    assert TOKEN[:8] not in log and "[REDACTED:" in log


@pytest.mark.slow
def test_tool_output_none_keeps_only_length_and_hash(bot):
    _configure(bot, 'tool_output = "none"\n')
    _replay(bot, stdout="hello from the tool\n")
    finished = [e for e in _events(bot) if e["kind"] == "tool.finished"]
    assert finished and all(e["payload"]["output_summary"] == "" for e in finished)
    log = (bot / "state" / "events.jsonl").read_text()
    assert "hello from the tool" not in log


@pytest.mark.slow
def test_tool_output_full_keeps_up_to_the_field_limit(bot):
    _configure(bot, 'tool_output = "full"\nfield_limit = 8192\n')
    _replay(bot)
    sizes = [len(e["payload"]["output_summary"].encode()) for e in _events(bot)
             if e["kind"] == "tool.finished"]
    assert max(sizes) == 8192
    note = next(e["payload"]["metadata"]["cut"]["output_summary"] for e in _events(bot)
                if e["kind"] == "tool.finished" and "cut" in e["payload"]["metadata"])
    assert note["bytes"] > 8192


@pytest.mark.slow
def test_file_inputs_full_keeps_the_write_content_bounded(bot):
    _configure(bot, 'file_inputs = "full"\n')
    _replay(bot, content="print('short file')\n")
    writes = [n for n in _calls(bot).values() if n["props"]["tool"] == "Write"]
    assert all("print('short file')" in n["props"]["input_summary"] for n in writes)


@pytest.mark.slow
def test_transcripts_false_archives_no_transcript(bot):
    _configure(bot, "transcripts = false\n")
    proc = gasp(bot, "import", "claude-code", str(CLAUDE_TRANSCRIPT))
    assert proc.returncode == 0, out(proc)
    assert not (bot / "transcripts").exists()
    assert "transcripts/" not in git(bot, "log", "--name-only", "--format=")
    assert gasp(bot, "check").returncode == 0


@pytest.mark.slow  # over half a second: out of the fast loop
def test_a_malformed_capture_table_is_one_line_and_nothing_is_written(bot):
    _configure(bot, 'tool_output = "everything"\n')
    before = (bot / "state" / "events.jsonl").read_bytes()
    head = git(bot, "rev-parse", "HEAD")
    proc = gasp(bot, "import", "claude-code", str(CLAUDE_TRANSCRIPT))
    err = proc.stderr.decode()
    assert proc.returncode == 1 and len(err.strip().splitlines()) == 1, out(proc)
    assert "capture.tool_output = 'everything' is not one of full, summary, none" in err
    assert (bot / "state" / "events.jsonl").read_bytes() == before
    assert git(bot, "rev-parse", "HEAD") == head


def test_the_cut_hash_is_of_the_redacted_text():
    from git_gasp.redact.capture import Capture

    cut: dict = {}
    text = "y" * 1000
    kept = Capture().output(text, cut)
    assert kept.endswith("…") and len(kept) == 500
    assert cut["output_summary"] == {"bytes": 1000,
                                     "sha256": hashlib.sha256(text.encode()).hexdigest()}
