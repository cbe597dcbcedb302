"""Model turns of a hook-recorded session: one model.called + model.finished per turn,
taken from the agent's session file at Stop / SessionEnd, as `git gasp import` records
them (one projection), the run naming its models."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from git_gasp.adapters.live import run_hook
from git_gasp.adapters.session_writer import run_id_for
from tests.adapters.samples import (
    CLAUDE_HOOKS,
    CLAUDE_TRANSCRIPT,
    CODEX_HOOKS,
    CODEX_ROLLOUT,
    read_jsonl,
    write_jsonl,
)
from tests.testing.repos import copy_repo
from tests.testing.run import gasp, out

pytestmark = pytest.mark.slow  # each test replays a whole session through the hooks

CLAUDE_SID = "6f48f32c-63b8-44c3-9f60-37aed18fbcf2"
CODEX_SID = "01a227f0-ba53-7d60-9f50-1d95813560bb"


def claude_home_transcript(rows: list[dict] | None = None) -> Path:
    """The sample transcript where Claude Code keeps it under the (test's) HOME."""
    path = Path(os.environ["HOME"], ".claude", "projects", "-home-dev-app", f"{CLAUDE_SID}.jsonl")
    path.parent.mkdir(parents=True, exist_ok=True)
    if rows is None:
        shutil.copy(CLAUDE_TRANSCRIPT, path)
    else:
        write_jsonl(path, rows)
    return path


def codex_home_rollout() -> Path:
    path = Path(os.environ["HOME"], ".codex", "sessions", "2026", "12", "01",
                f"rollout-x-{CODEX_SID}.jsonl")
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(CODEX_ROLLOUT, path)
    return path


def replay_hooks(repo: Path, path: Path, agent: str, **override) -> None:
    for row in read_jsonl(path):
        row.update(cwd=str(repo), **override)
        what = run_hook(json.dumps(row).encode(), agent=agent, repo=str(repo))
        assert what.startswith("recorded"), what


def events(repo: Path) -> list[dict]:
    return [json.loads(line) for line in (repo / "state/events.jsonl").read_text().splitlines()]


def model_events(repo: Path) -> list[tuple]:
    """(kind, payload, the kind of its cause, its ops) of every model event, in order."""
    log = events(repo)
    kind_of = {e["id"]: e["kind"] for e in log}
    ops_of = {e["causation_id"]: e["payload"] for e in log if e["kind"] == "state.ops_applied"}
    return [(e["kind"], e["payload"], kind_of.get(e["causation_id"]), ops_of.get(e["id"]))
            for e in log if e["kind"] in ("model.called", "model.finished")]


def test_claude_hooks_record_each_model_turn_as_import_does(agent, tmp_path):
    transcript = claude_home_transcript()
    other = copy_repo(agent, tmp_path / "other")
    replay_hooks(agent, CLAUDE_HOOKS, "claude-code")
    hooked = model_events(agent)
    called = [p for k, p, _c, _o in hooked if k == "model.called"]
    assert len(called) == 7 and {p["model"] for p in called} == {"claude-opus-5-5"}
    finished = [p for k, p, _c, _o in hooked if k == "model.finished"]
    assert [p["stop_reason"] for p in finished] == ["tool_use"] * 6 + ["end_turn"]
    assert all(p["usage"]["input_tokens"] == 10 for p in finished)
    assert finished[-1]["output_summary"] == "Fixed add() and committed; the test passes."
    # causally placed: the first turn answers the prompt (its goal), the others a result
    assert [c for k, _p, c, _o in hooked if k == "model.called"] == [
        "goal.created"] + ["tool.finished"] * 6
    # the same session imported into another repository: the same model events
    proc = gasp(other, "import", "claude-code", str(transcript))
    assert proc.returncode == 0, out(proc)
    assert model_events(other) == hooked
    # the run names its model, in the log alone
    run_id = run_id_for("claude-code", CLAUDE_SID)
    finish = next(e for e in events(agent) if e["kind"] == "run.finished")
    assert finish["payload"]["metadata"]["models"] == ["claude-opus-5-5"]
    graph = json.loads(gasp(agent, "fold", "--json").stdout)
    assert graph["nodes"][run_id]["props"]["model"] == "claude-opus-5-5"
    assert gasp(agent, "check").returncode == 0


def test_a_model_swapped_mid_session_shows_in_the_log(agent):
    rows = read_jsonl(CLAUDE_TRANSCRIPT)
    swapped = 0
    for row in rows:
        msg = row.get("message")
        if row.get("type") == "assistant" and isinstance(msg, dict) and msg.get("id") in (
                "msg_4628d8e77beb4e9fb10a", "msg_3d7a6ffff8f24dd889d8",
                "msg_6f929f72defe460fa572"):
            msg["model"] = "claude-sonnet-5"
            swapped += 1
    assert swapped
    claude_home_transcript(rows)
    replay_hooks(agent, CLAUDE_HOOKS, "claude-code")
    called = [(p["model"], ops) for k, p, _c, ops in model_events(agent) if k == "model.called"]
    assert [m for m, _ops in called] == ["claude-opus-5-5"] * 4 + ["claude-sonnet-5"] * 3
    run_id = run_id_for("claude-code", CLAUDE_SID)
    run_updates = [[op["UpdateNode"]["props"] for op in ops if "UpdateNode" in op
                    and op["UpdateNode"]["id"] == run_id] for _m, ops in called]
    assert run_updates[0] == [{"model": "claude-opus-5-5", "models": ["claude-opus-5-5"]}]
    assert run_updates[4] == [{"model": "claude-sonnet-5",
                               "models": ["claude-opus-5-5", "claude-sonnet-5"]}]
    assert [u for u in run_updates if u] == [run_updates[0], run_updates[4]]
    finish = next(e for e in events(agent) if e["kind"] == "run.finished")
    assert finish["payload"]["metadata"]["models"] == ["claude-opus-5-5", "claude-sonnet-5"]


def test_codex_hooks_take_model_turns_from_the_rollout(agent, tmp_path):
    rollout = codex_home_rollout()
    other = copy_repo(agent, tmp_path / "other")
    replay_hooks(agent, CODEX_HOOKS, "codex", transcript_path=str(rollout))
    started = next(e for e in events(agent) if e["kind"] == "run.started")
    assert started["payload"]["metadata"]["model"] == "mock-model"  # Codex's hooks say it
    hooked = model_events(agent)
    assert [p["model"] for k, p, _c, _o in hooked if k == "model.called"] == ["mock-model"] * 7
    proc = gasp(other, "import", "codex", str(rollout))
    assert proc.returncode == 0, out(proc)
    assert model_events(other) == hooked  # the same events, caused by the same kinds
    assert [c for k, _p, c, _o in hooked if k == "model.called"] == [
        "goal.created"] + ["tool.finished"] * 6


def test_a_session_without_its_transcript_still_closes(agent):
    replay_hooks(agent, CLAUDE_HOOKS, "claude-code")  # no transcript anywhere
    kinds = [e["kind"] for e in events(agent)]
    assert "model.called" not in kinds and "run.finished" in kinds
