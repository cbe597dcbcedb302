"""GitHub Copilot CLI: its own hook file (written whole, removed on uninstall, a foreign
one refused) and payloads written from GitHub's CLI hooks reference, read into the
neutral events and recorded through the one path once."""

from __future__ import annotations

import json

import pytest

from git_gasp.adapters.dialects import copilot
from git_gasp.adapters.dialects.table import DIALECTS
from git_gasp.adapters.payloads import parse_hook_payload
from tests.adapters.samples import DATA, read_jsonl, replays_once
from tests.testing.run import gasp, git, out

COPILOT_HOOKS = DATA / "copilot-docs" / "hook-payloads.jsonl"


def test_each_event_reads_as_its_neutral_event():
    hooks = [parse_hook_payload(row, "copilot") for row in read_jsonl(COPILOT_HOOKS)]
    assert [h.event for h in hooks][:2] == ["SessionStart", "UserPromptSubmit"]
    assert hooks[1].raw["prompt_id"] == hooks[1].raw["timestamp"]
    results = [h for h in hooks if h.event in ("PostToolUse", "PostToolUseFailure")]
    assert [h.is_error for h in results] == [False, False, True, False, False, False]
    assert results[0].output.startswith("Created file") and results[-1].output.startswith(
        "3f2a9c1 Fix add")
    failed = parse_hook_payload(dict(read_jsonl(COPILOT_HOOKS)[3], tool_result={
        "result_type": "failure", "text_result_for_llm": "no"}), "copilot")
    assert failed.is_error is True


def test_the_hook_file_is_ours_alone(tmp_path):
    repo = tmp_path / "app"
    repo.mkdir()
    git(repo, "init", "-q")
    path, changed = copilot.install(repo, "git-gasp-hook copilot")
    assert changed and path == repo / ".github/hooks/git-gasp.json"
    data = json.loads(path.read_text())
    assert data["version"] == 1 and set(data["hooks"]) == set(DIALECTS["copilot"].events)
    assert data["hooks"]["PreToolUse"] == [
        {"type": "command", "bash": "git-gasp-hook copilot", "timeoutSec": 60}]
    assert copilot.install(repo, "git-gasp-hook copilot") == (path, False)
    assert copilot.install(repo, None) == (path, True) and not path.exists()
    path.write_text('{"version": 1, "hooks": {"preToolUse": [{"type": "command", '
                    '"bash": "./mine.sh"}]}}')
    mine = path.read_bytes()
    proc = gasp(repo, "adapt", "copilot", "install")
    assert proc.returncode == 1 and "not git-gasp's" in out(proc)
    assert path.read_bytes() == mine


@pytest.mark.slow
def test_the_session_replays_into_a_conformant_run_once(agent):
    rows = [dict(r, cwd=str(agent)) for r in read_jsonl(COPILOT_HOOKS)]
    assert replays_once(agent, "copilot", rows) == [
        "create", "create", "bash", "edit", "bash", "bash"]
