"""Hooks and drainers killed at random moments (SIGKILL) lose nothing and record nothing
twice: Claude Code's real payloads of a session, replayed through `git-gasp-hook` while
hooks are killed as they run (and the payload then sent again, as a sender that got no
answer would) and the detached drainers are killed as they record, give the log an
unkilled replay gives: the same events, once each, in the same order."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.adapters.samples import CLAUDE_HOOKS, read_jsonl
from tests.testing.run import drained, gasp, git, out

pytestmark = pytest.mark.slow

HOOK = str(Path(sys.executable).with_name("git-gasp-hook"))
SESSIONS = ("6f48f32c-0000-4000-8000-00000000000a", "6f48f32c-0000-4000-8000-00000000000b")
# ids made of the time (UUIDv7: events, decisions), new on every write
VOLATILE = re.compile(r"\b([a-z]+)_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _payloads(repo: Path) -> list[bytes]:
    """Two sessions of the sample's payloads, one after the other, in `repo`."""
    return [json.dumps(dict(row, cwd=str(repo), session_id=sid), separators=(",", ":")).encode()
            for sid in SESSIONS for row in read_jsonl(CLAUDE_HOOKS)]


def _agent(base: Path) -> Path:
    base.mkdir()
    assert gasp(base, "init", "bot").returncode == 0
    return base / "bot"


def _drainers(repo: Path) -> list[int]:
    """The drainers at work for `repo` (started by this test's hooks), by pid."""
    mark, found = str(repo).encode(), []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmd = fh.read()
        except OSError:
            continue
        if b"git_gasp.adapters.agent_hook.drain" in cmd and mark in cmd.split(b"\0"):
            found.append(int(pid))
    return found


def _settle(repo: Path) -> None:
    """Wait for every drainer of `repo` to end, then record what is left."""
    deadline = time.monotonic() + 120
    while _drainers(repo) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _drainers(repo)
    drained(repo)


def _hook(repo: Path, data: bytes) -> subprocess.Popen:
    proc = subprocess.Popen([HOOK, "claude-code"], cwd=repo, stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    proc.stdin.write(data)
    proc.stdin.close()
    return proc


def _log(repo: Path) -> list[str]:
    """The event lines, ids and times made of the time left out (new on every write),
    the repo's path as REPO."""
    lines = []
    text = (repo / "state" / "events.jsonl").read_text().replace(str(repo), "REPO")
    for line in text.splitlines():
        event = json.loads(line)
        for key in ("id", "ts_ms", "causation_id"):
            event.pop(key)
        text = VOLATILE.sub(r"\1_ID", json.dumps(event, sort_keys=True))
        lines.append(re.sub(r'"(\w*ts_ms|ts|duration_ms)": \d+', r'"\1": 0', text))
    return lines


def _killer(repo: Path, rng: random.Random, stop: threading.Event, kills: list[int]) -> None:
    while not stop.is_set():
        time.sleep(rng.uniform(0.0, 0.05))
        for pid in _drainers(repo):
            if rng.random() < 0.5:
                try:
                    os.kill(pid, signal.SIGKILL)
                    kills.append(pid)
                except ProcessLookupError:
                    pass


def test_killed_hooks_and_drainers_lose_nothing_and_record_nothing_twice(tmp_path):
    calm = _agent(tmp_path / "calm")
    for data in _payloads(calm):
        assert _hook(calm, data).wait(120) == 0
    _settle(calm)

    rough = _agent(tmp_path / "rough")
    rng, killer_rng = random.Random(40), random.Random(41)  # one per thread
    hooks_killed: list[float] = []
    drainers_killed: list[int] = []
    stop = threading.Event()
    killer = threading.Thread(target=_killer, args=(rough, killer_rng, stop, drainers_killed))
    killer.start()
    try:
        for data in _payloads(rough):
            first = _hook(rough, data)
            delay = rng.uniform(0.0, 0.04)  # a hook takes 10-40 ms here
            try:
                first.wait(delay if rng.random() < 0.6 else 120)
            except subprocess.TimeoutExpired:
                first.send_signal(signal.SIGKILL)
                first.wait(30)
                hooks_killed.append(delay)
                assert _hook(rough, data).wait(120) == 0  # no answer: sent again
    finally:
        stop.set()
        killer.join()
    _settle(rough)

    assert hooks_killed and drainers_killed, (hooks_killed, drainers_killed)
    gdir = rough / ".git" / "gasp"
    assert not list((gdir / "queue").glob("*.payload"))
    assert not (gdir / "queue" / "failed").exists() or not any((gdir / "queue" / "failed")
                                                               .iterdir())
    calm_log, rough_log = _log(calm), _log(rough)
    assert len(rough_log) == len(calm_log), (len(rough_log), len(calm_log))
    for i, (a, b) in enumerate(zip(calm_log, rough_log, strict=True)):
        assert a == b, f"line {i + 1} differs:\n{a[:600]}\n{b[:600]}"
    check = gasp(rough, "check")
    assert check.returncode == 0, out(check)
    subjects = [git(r, "log", "--format=%s").splitlines() for r in (calm, rough)]
    assert subjects[0] == subjects[1] and len(subjects[0]) == 1 + len(SESSIONS), subjects
