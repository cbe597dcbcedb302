"""The hook queues the raw payload first: a hook killed after that loses nothing, and
the next hook records the entry once, redacted; payloads are cut before redaction."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import time
from pathlib import Path

import pytest

from git_gasp.adapters.payloads import TRIM_HEAD, TRIM_MARK, TRIM_TAIL, trim_payload
from git_gasp.base.fileops import try_lock
from tests.adapters.samples import CLAUDE_HOOKS, read_jsonl
from tests.testing.run import drained, gasp, git

pytestmark = pytest.mark.slow

SECRET = "sk-ant-api03-" + "Qx7Lm2Vb9Nc4Zr8Tp1Ws6Yd3Kf5Hg0Jj-AA"


def _gasp_dir(repo: Path) -> Path:
    return Path(git(repo, "rev-parse", "--absolute-git-dir").strip()) / "gasp"


def _rows(repo: Path) -> list[dict]:
    rows = read_jsonl(CLAUDE_HOOKS)
    for row in rows:
        row["cwd"] = str(repo)
    return rows


def _hook(repo: Path, row: dict, **kw) -> subprocess.Popen:
    proc = subprocess.Popen(["git", "gasp", "adapt", "hook"], cwd=repo, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    proc.stdin.write(json.dumps(row).encode())
    proc.stdin.close()
    return proc


def test_a_queued_payload_waits_for_the_drainer_at_work(tmp_path):
    assert gasp(tmp_path, "init", "bot").returncode == 0
    repo = tmp_path / "bot"
    gdir = _gasp_dir(repo)
    rows = _rows(repo)
    start, prompt = rows[0], dict(rows[1], prompt=f"use key {SECRET} to write calc.py")
    assert start["hook_event_name"] == "SessionStart"
    assert prompt["hook_event_name"] == "UserPromptSubmit"
    first = _hook(repo, start)
    assert first.wait(60) == 0
    drained(repo)
    queue = gdir / "queue"
    assert not list(queue.glob("*.payload"))
    # A drainer holds the lock: this hook queues its payload, starts none, exits at once.
    with try_lock(gdir / "hook.lock", 5) as got:
        assert got
        hooked = _hook(repo, prompt)
        assert hooked.wait(30) == 0, hooked.stderr.read()
        entries = list(queue.glob("*.payload"))
        assert len(entries) == 1
    # Raw (the agent's bytes), private to its owner, never committed.
    assert SECRET in entries[0].read_text()
    assert stat.S_IMODE(entries[0].stat().st_mode) == 0o600
    events = repo / "state" / "events.jsonl"
    assert b"goal.created" not in events.read_bytes()
    # The next hook's drainer records the queue: the prompt is recorded once, redacted.
    nxt = _hook(repo, rows[2])
    assert nxt.wait(60) == 0, nxt.stderr.read()
    drained(repo)
    assert not list(queue.glob("*.payload"))
    data = events.read_bytes()
    assert data.count(b'"goal.created"') == 1, data
    assert b"[REDACTED:anthropic_key:" in data and SECRET.encode() not in data
    for path in (gdir / "sessions").glob("*.json"):
        assert SECRET not in path.read_text(), path
    assert gasp(repo, "check").returncode == 0


def test_payloads_are_cut_to_their_stored_size_before_redaction():
    long = "x " * 50_000 + SECRET + " y" * 50_000
    row = {"tool_input": {"command": long}, "items": list(range(1000)), "n": 3}
    cut = trim_payload(row)
    text = cut["tool_input"]["command"]
    assert TRIM_MARK in text and len(text) <= TRIM_HEAD + TRIM_TAIL + len(TRIM_MARK)
    assert text.startswith("x x ") and text.endswith(" y y")
    assert cut["items"][:3] == [0, 1, 2] and cut["items"][-1] == 999 and len(cut["items"]) == 200
    assert row["tool_input"]["command"] == long, "the input is not changed"
    short = {"a": "b" * 100}
    assert trim_payload(short) == short


def test_a_39kb_adversarial_payload_is_recorded(tmp_path):
    """The payload that kept a hook busy 69 s (quadratic redaction) is just recorded."""
    assert gasp(tmp_path, "init", "bot").returncode == 0
    repo = tmp_path / "bot"
    rows = _rows(repo)
    post = next(r for r in rows if r["hook_event_name"] == "PostToolUse")
    post = dict(post, tool_response={"stdout": "-".join(["ab"] * 13_000), "stderr": "",
                                     "interrupted": False})
    for row in (rows[0], post):
        proc = _hook(repo, row)
        assert proc.wait(120) == 0, proc.stderr.read()
    drained(repo)
    log = (_gasp_dir(repo) / "adapter.log").read_text()
    assert "PostToolUse: recorded" in log and "error" not in log.lower(), log
    assert not list((_gasp_dir(repo) / "queue").glob("*.payload"))


def test_a_failed_entry_is_set_aside_redacted(tmp_path):
    from git_gasp.adapters.agent_hook_queue import drain, enqueue

    assert gasp(tmp_path, "init", "bot").returncode == 0
    repo = tmp_path / "bot"
    gdir = _gasp_dir(repo)
    gdir.mkdir(parents=True, exist_ok=True)
    enqueue(gdir, "claude-code", json.dumps({"hook_event_name": "PreToolUse",
                                         "note": f"key {SECRET}"}).encode())
    assert drain(repo, gdir, time.monotonic() + 30) == 0
    [failed] = (gdir / "queue" / "failed").glob("*.payload")
    text = failed.read_text()
    assert SECRET not in text and "[REDACTED:anthropic_key:" in text
    assert stat.S_IMODE(failed.stat().st_mode) == 0o600
    assert "no session_id" in (gdir / "adapter.log").read_text()


def _fsynced(monkeypatch) -> list[str]:
    """The paths os.fsync is called on from now (a directory's too)."""
    seen: list[str] = []
    real = os.fsync

    def watch(fd: int) -> None:
        seen.append(os.readlink(f"/proc/self/fd/{fd}"))
        real(fd)

    monkeypatch.setattr(os, "fsync", watch)
    return seen


def test_an_entry_is_fsynced_only_when_it_stays_queued(tmp_path, monkeypatch):
    """A hook that records its own entry spends no fsync on it (its events are fsynced
    in the log); one that leaves it queued (another hook holds the lock) makes it, and
    the queue directory, durable before it exits."""
    from git_gasp.adapters.live import run_hook

    assert gasp(tmp_path, "init", "bot").returncode == 0
    repo = tmp_path / "bot"
    gdir = _gasp_dir(repo)
    rows = _rows(repo)
    seen = _fsynced(monkeypatch)
    assert run_hook(json.dumps(rows[0]).encode(), agent="claude-code").startswith("recorded")
    queue = str(gdir / "queue")
    assert not [p for p in seen if p.startswith(queue)], seen
    assert str(repo / "state" / "events.jsonl") in seen  # the log is
    seen.clear()
    with try_lock(gdir / "hook.lock", 5) as got:
        assert got
        what = run_hook(json.dumps(rows[1]).encode(), agent="claude-code", budget_s=0.2)
    assert what == "queued"
    [entry] = (gdir / "queue").glob("*.payload")
    assert seen == [str(entry), queue], seen
