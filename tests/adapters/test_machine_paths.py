"""No machine paths in the log: the project's paths relative to its top, the home
directory as ~, the transcript by its archive path; absolute only when asked."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from git_gasp.adapters.live import run_hook
from git_gasp.adapters.session_writer import run_id_for
from git_gasp.base.agentconfig import read_config
from git_gasp.base.errors import FormatError
from tests.adapters.samples import CLAUDE_HOOKS, CLAUDE_TRANSCRIPT
from tests.testing.run import gasp, out

pytestmark = pytest.mark.slow  # each test replays a whole session through the hooks

CLAUDE_SID = "6f48f32c-63b8-44c3-9f60-37aed18fbcf2"


def moved(text: str, repo: Path) -> str:
    """The sample's text as if it ran in `repo` under this test's HOME."""
    home = os.environ["HOME"]
    return text.replace("/home/dev/app", str(repo)).replace("/home/dev", home)


def machine_paths(repo: Path) -> list[str]:
    home = os.environ["HOME"]
    return [p for p in {str(repo), os.path.realpath(repo), home, os.path.realpath(home)}]


def leaks(repo: Path) -> list[str]:
    lines = (repo / "state/events.jsonl").read_text().splitlines()
    return [line for line in lines for p in machine_paths(repo) if p in line]


def replay(repo: Path) -> list[dict]:
    transcript = Path(os.environ["HOME"], ".claude/projects/-app", f"{CLAUDE_SID}.jsonl")
    transcript.parent.mkdir(parents=True)
    transcript.write_text(moved(CLAUDE_TRANSCRIPT.read_text(), repo))
    for line in moved(CLAUDE_HOOKS.read_text(), repo).splitlines():
        row = json.loads(line)
        row["transcript_path"] = str(transcript)
        what = run_hook(json.dumps(row).encode(), agent="claude-code", repo=str(repo))
        assert what.startswith("recorded"), what
    return [json.loads(line) for line in (repo / "state/events.jsonl").read_text().splitlines()]


def test_hooks_store_no_machine_path(agent):
    events = replay(agent)
    assert leaks(agent) == []
    started = next(e for e in events if e["kind"] == "run.started")["payload"]["metadata"]
    run_id = run_id_for("claude-code", CLAUDE_SID)
    assert started["cwd"] == "."
    assert started["transcript_path"] == f"transcripts/{run_id}.jsonl.gz"
    assert (agent / started["transcript_path"]).is_file()  # the archive it names
    calls = [e["payload"] for e in events if e["kind"] == "tool.called"]
    assert json.loads(calls[0]["input_summary"])["file_path"] == "calc.py"
    patch = next(e for e in events if e["kind"] == "patch.proposed")["payload"]
    assert patch["metadata"]["files"] == ["calc.py", "test_calc.py"]
    observed = [e["payload"]["summary"] for e in events if e["kind"] == "observation.created"]
    assert observed[0].endswith(": created calc.py")


def test_import_stores_no_machine_path(agent, tmp_path):
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(moved(CLAUDE_TRANSCRIPT.read_text(), agent))
    proc = gasp(agent, "import", "claude-code", str(transcript))
    assert proc.returncode == 0, out(proc)
    assert leaks(agent) == []


def test_absolute_paths_when_the_config_asks(agent):
    config = agent / ".agent/config.toml"
    config.write_text(config.read_text() + '\n[capture]\npaths = "absolute"\n')
    events = replay(agent)
    started = next(e for e in events if e["kind"] == "run.started")["payload"]["metadata"]
    assert started["cwd"] == str(agent)
    assert started["transcript_path"].startswith(os.environ["HOME"])
    assert leaks(agent)


def test_a_bad_paths_setting_is_refused_naming_the_key(agent):
    config = agent / ".agent/config.toml"
    config.write_text(config.read_text() + '\n[capture]\npaths = "sometimes"\n')
    with pytest.raises(FormatError, match="capture.paths"):
        read_config(agent)
