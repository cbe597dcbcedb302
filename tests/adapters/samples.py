"""The real agent sessions copied from ../shared/samples, and helpers to read them.

Not a conftest.py: a second conftest module shadows tests/conftest.py for the suites
that `from conftest import` it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_gasp.adapters.agent_hook.queue_files import enqueue
from tests.testing.run import drained, gasp, git, out

DATA = Path(__file__).resolve().parent / "data"
CLAUDE_DIR = DATA / "claude-code-2.1.328"
CODEX_DIR = DATA / "codex-0.171.0"
CLAUDE_TRANSCRIPT = CLAUDE_DIR / "session-transcript.jsonl"
CLAUDE_HOOKS = CLAUDE_DIR / "hook-payloads.jsonl"
CODEX_ROLLOUT = CODEX_DIR / "rollout.jsonl"
CODEX_HOOKS = CODEX_DIR / "hook-payloads.jsonl"


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def claude_lines() -> list[dict]:
    return read_jsonl(CLAUDE_TRANSCRIPT)


@pytest.fixture
def codex_lines() -> list[dict]:
    return read_jsonl(CODEX_ROLLOUT)


def replay_session(repo: Path, agent: str, rows: list[dict]) -> list[dict]:
    """Queue the hook payloads `rows` of `agent` in `repo`'s git dir as its hook would (no
    agent process to wait for: pid 1), drain them, and return the log's events."""
    gdir = str(Path(git(repo, "rev-parse", "--absolute-git-dir").strip()) / "gasp")
    for row in rows:
        enqueue(gdir, agent, json.dumps(row).encode(), pid=1)
    drained(repo)
    return read_jsonl(repo / "state/events.jsonl")


def spine_of(events: list[dict]) -> tuple[list[str], str]:
    """(the eval statuses, the run's outcome) of a recorded session's `events`, after
    checking it lifted one patch and one decision."""
    kinds = [e["kind"] for e in events]
    assert kinds.count("patch.proposed") == 1 and kinds.count("decision.created") == 1
    run = next(e for e in events if e["kind"] == "run.finished")
    return ([e["payload"]["status"] for e in events if e["kind"] == "eval.finished"],
            run["payload"]["outcome"])


def replays_once(repo: Path, agent: str, rows: list[dict]) -> list[str]:
    """Replay the hook payloads `rows` of `agent` in `repo`: a conformant run with the
    lifted spine (Failed then Passed, promoted), and every payload sent again adds
    nothing. Returns the tools called, in order."""
    events = replay_session(repo, agent, rows)
    log = (repo / "state/events.jsonl").read_bytes()
    assert spine_of(events) == (["Failed", "Passed"], "promoted")
    check = gasp(repo, "check")
    assert check.returncode == 0, out(check)
    replay_session(repo, agent, rows)
    assert (repo / "state/events.jsonl").read_bytes() == log
    return [e["payload"]["tool"] for e in events if e["kind"] == "tool.called"]
