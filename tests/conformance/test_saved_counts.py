"""The count `status` keeps under the git dir (`conformance/saved/counts.py`): after appends it
counts only the new lines and agrees with a fresh count of the whole log; after the log
is truncated or rewritten the stale count is not used."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from git_gasp.conformance.saved import counts as savedcount
from git_gasp.protocol.envelope import parse_log
from git_gasp.protocol.logcount import LogCount
from tests.testing.events import goal_pair, line, ops, update
from tests.testing.run import gasp, out

REL = "state/events.jsonl"


def _log(agent: Path) -> Path:
    return agent / REL


def _numbers(count) -> tuple:
    return (count.domain, count.ops, count.last_id, count.last_line, count.last_kind,
            count.size, count.lines)


def _fresh(agent: Path) -> tuple:
    """The count of the whole log, as `fold` takes it."""
    data = _log(agent).read_bytes()
    c = LogCount(parse_log(data).events, 0)
    return (c.domain, c.ops, c.last_id, c.last_line, c.last_kind, len(data),
            data.count(b"\n"))


@pytest.fixture
def counted(agent):
    """An agent whose log holds three goals, counted (and saved) once."""
    with _log(agent).open("ab") as fh:
        fh.write(goal_pair(1) + goal_pair(2) + goal_pair(3))
    first = savedcount.log_count(agent, REL, _log(agent).read_bytes())
    assert _numbers(first) == _fresh(agent)
    return agent


def _no_whole_read(monkeypatch):
    def refuse(*_a):
        raise AssertionError("the whole log was read although a count was saved")
    monkeypatch.setattr(savedcount, "_whole", refuse)


def test_appends_are_counted_from_the_saved_count(counted, monkeypatch):
    with _log(counted).open("ab") as fh:
        fh.write(goal_pair(4) + line("event_x", "observation.created", {"id": "obs_x"}))
    _no_whole_read(monkeypatch)
    again = savedcount.log_count(counted, REL, _log(counted).read_bytes())
    assert _numbers(again) == _fresh(counted)
    assert again.last_id == "event_x" and again.domain == 5 and again.ops == 4
    with _log(counted).open("ab") as fh:  # and the longer count was saved in turn
        fh.write(ops("event_y", "event_x", update("goal_1", status="Done")))
    last = savedcount.log_count(counted, REL, _log(counted).read_bytes())
    assert _numbers(last) == _fresh(counted) and last.last_kind == "state.ops_applied"
    assert len(last.event_ids) == last.domain + last.ops == len(set(last.event_ids))


@pytest.mark.parametrize("how", ["truncated", "rewritten"])
def test_a_rewritten_log_is_counted_afresh(counted, how):
    data = _log(counted).read_bytes()
    lines = data.splitlines(keepends=True)
    if how == "truncated":  # shorter than what was counted: then grown past it again
        new = b"".join(lines[:2]) + b"".join(
            ops(f"event_o{i}", None, update("goal_1", n=i)) for i in range(6))
        assert len(new) > len(data)
    else:  # the same length, one counted line changed in place (an ops event made domain)
        swapped = lines[1].replace(b'"kind":"state.ops_applied"', b'"kind":"state.ops_applieX"')
        assert len(swapped) == len(lines[1]) and swapped != lines[1]
        new = lines[0] + swapped + b"".join(lines[2:])
    stale = _numbers(savedcount.log_count(counted, REL, data))
    _log(counted).write_bytes(new)
    assert _fresh(counted)[:2] != stale[:2]
    assert _numbers(savedcount.log_count(counted, REL, new)) == _fresh(counted)


def test_a_damaged_entry_is_no_count(counted, monkeypatch):
    entry = next((counted / ".git/gasp/count").glob("*.bin"))
    entry.write_bytes(entry.read_bytes()[:-3])
    assert _numbers(savedcount.log_count(counted, REL, _log(counted).read_bytes())) == \
        _fresh(counted)


def _status_count(agent: Path) -> dict:
    proc = gasp(agent, "status", "--json")
    assert proc.returncode == 0, out(proc)
    return json.loads(proc.stdout)["count"]


@pytest.mark.slow  # over half a second: out of the fast loop
def test_status_counts_as_fold_after_appends_and_a_rewrite(agent):
    log = _log(agent)
    with log.open("ab") as fh:
        fh.write(goal_pair(1) + goal_pair(2))
    first = _status_count(agent)
    with log.open("ab") as fh:
        fh.write(goal_pair(3))
    grown = _status_count(agent)
    assert grown["events"]["all"] == first["events"]["all"] + 2
    assert list((agent / ".git/gasp/count").glob("*.bin"))
    _same_as_fold(agent, grown)
    log.write_bytes(b"".join(log.read_bytes().splitlines(keepends=True)[:-3]))
    _same_as_fold(agent, _status_count(agent))


def _same_as_fold(agent: Path, count: dict) -> None:
    """`fold`'s first line says the count `status` gives (without the nodes)."""
    fold = gasp(agent, "fold")
    assert fold.returncode == 0, out(fold)
    text = re.sub(r", \d+ nodes?,", ",", count["text"])
    assert fold.stdout.decode().splitlines()[0] == f"{REL}: {text}"
