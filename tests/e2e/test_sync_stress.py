"""Records against syncs, unrigged (#31, item 1): in clone A a loop of `git gasp record`
(half of them with `--wait`, each committed with plain `git commit`) runs against a loop
of `git gasp sync` in the same clone (merging and rebasing in turn), while clone B
records, commits and syncs to the same guarded bare remote. Nothing is timed or
paused: the processes race as they come.

After the loops and a final sync on each clone: every id printed by a record that
exited 0 is in the remote's `state/events.jsonl`, no event is there twice, a fresh
clone of the remote passes `git gasp check`, no sync failed in a way it should not
(refused, internal error, stranded) and none left a merge or rebase half done.

The rounds are GASP_STRESS_ROUNDS (default 8 records in A, and as many rounds in B);
every process is bounded by a timeout, and the figures (codes, give-ups) are printed."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.testing.syncload import LOG, make_clones, make_remote

pytestmark = pytest.mark.slow

ROUNDS = int(os.environ.get("GASP_STRESS_ROUNDS") or 8)
LIMIT_S = 300  # no single command may take longer (a hang fails, it is never timed)
OK_SYNC = {0, 4, 5}  # synced; gave up (the work stays on the branch); cannot start now


@dataclass
class Tally:
    ids: list[str] = field(default_factory=list)  # printed by records that exited 0
    codes: Counter = field(default_factory=Counter)  # (what, exit code) -> how many
    bad: list[str] = field(default_factory=list)
    gave_up: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(list(args), cwd=cwd, capture_output=True, text=True,
                              timeout=LIMIT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{' '.join(args)} in {cwd.name} took over {LIMIT_S} s")


def _record(t: Tally, clone: Path, summary: str, *args: str) -> None:
    proc = _run(clone, "git", "gasp", "record", "observation", "--summary", summary, *args)
    with t.lock:
        t.codes["record", proc.returncode] += 1
        if proc.returncode == 0:
            t.ids.append(proc.stdout.strip())
        elif proc.returncode != 1 or "lease" not in proc.stderr:
            t.bad.append(f"record {summary}: exit {proc.returncode}: {proc.stderr.strip()}")


def _commit(clone: Path, message: str) -> None:
    """Commit the log if it changed (a sync's merge may hold the index: tried again
    by the next round, or at the end)."""
    _run(clone, "git", "commit", "-q", "--no-verify", "-m", message, "--", LOG)


def _sync(t: Tally, clone: Path, *args: str) -> int:
    proc = _run(clone, "git", "gasp", "sync", "--json", *args)
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        report = {}
    with t.lock:
        t.codes["sync " + clone.name, proc.returncode] += 1
        if proc.returncode == 4:
            t.gave_up.append(f"{clone.name}: {proc.stderr.strip()}")
        elif proc.returncode not in OK_SYNC:
            t.bad.append(f"sync in {clone.name}: exit {proc.returncode}: "
                         f"{report.get('reason') or proc.stderr.strip()}")
    return proc.returncode


def _recorder(t: Tally, clone: Path, rounds: int, done: threading.Event) -> None:
    try:
        for i in range(rounds):
            _record(t, clone, f"a{i}", *(("--wait",) if i % 2 == 0 else ()))
            _commit(clone, f"a{i}")
    finally:
        done.set()


def _syncer(t: Tally, clone: Path, done: threading.Event) -> None:
    rebase = False
    while not done.is_set():
        _sync(t, clone, *(("--rebase",) if rebase else ()))
        rebase = not rebase


def _other(t: Tally, clone: Path, rounds: int) -> None:
    for i in range(rounds):
        _record(t, clone, f"b{i}", "--wait")
        _commit(clone, f"b{i}")
        _sync(t, clone)


def _settled(clone: Path) -> list[str]:
    """What a sync would refuse in `clone`: a merge or rebase in progress, changes."""
    gdir = clone / ".git"
    left = [n for n in ("MERGE_HEAD", "rebase-merge", "rebase-apply") if (gdir / n).exists()]
    status = _run(clone, "git", "status", "--porcelain", "--untracked-files=no").stdout
    return left + ([status.strip()] if status.strip() else [])


def _remote_log(remote: Path) -> list[dict]:
    data = _run(remote, "git", "show", f"main:{LOG}").stdout
    return [json.loads(line) for line in data.splitlines()]


def test_every_recorded_id_reaches_the_remote_under_racing_syncs(agent, tmp_path):
    remote = make_remote(tmp_path, agent)
    a, b = make_clones(tmp_path, str(remote), 2)
    t = Tally()
    done = threading.Event()
    threads = [threading.Thread(target=_recorder, args=(t, a, ROUNDS, done)),
               threading.Thread(target=_syncer, args=(t, a, done)),
               threading.Thread(target=_other, args=(t, b, ROUNDS))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for clone in (a, b, a):  # what is left, one clone at a time
        _commit(clone, "the rest")
        codes = [_sync(t, clone) for _ in range(3)]
        assert 0 in codes, f"{clone.name}: no final sync went through: {codes}"
    print(f"{len(t.ids)} ids printed; {dict(sorted(t.codes.items()))}; "
          f"{len(t.gave_up)} gave up: {t.gave_up}")
    assert t.bad == []
    assert t.ids  # B's records never compete with a sync of their own clone
    events = _remote_log(remote)
    counts = Counter(e["id"] for e in events)
    assert [i for i, n in counts.items() if n > 1] == []
    nodes = {e["payload"].get("id") for e in events if isinstance(e.get("payload"), dict)}
    assert [i for i in t.ids if i not in nodes] == []  # every printed id arrived
    for clone in (a, b):
        assert _settled(clone) == [], clone.name
    fresh = tmp_path / "fresh"
    _run(tmp_path, "git", "clone", "-q", str(remote), str(fresh))
    check = _run(fresh, "git", "gasp", "check")
    assert check.returncode == 0, check.stdout + check.stderr
