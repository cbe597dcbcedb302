"""The real agent sessions copied from ../shared/samples, and helpers to read them.

Not a conftest.py: a second conftest module shadows tests/conftest.py for the suites
that `from conftest import` it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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
