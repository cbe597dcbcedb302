"""`lineage` takes an event id as `log` (or `log --ops`) prints it: the node the event
created or changed stands for it (issue 42, one count: an id any command prints is
found by `lineage`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.testing.events import goal_pair, line, ops, relate, update
from tests.testing.run import gasp, out


def _ok(repo: Path, *args: str) -> str:
    proc = gasp(repo, *args)
    assert proc.returncode == 0, out(proc)
    return proc.stdout.decode()


def _log_ids(repo: Path) -> list[str]:
    """Every event id as `log --ops` prints it, oldest first."""
    return [x.split()[0] for x in _ok(repo, "log", "--no-pager", "--ops").splitlines()][::-1]


@pytest.mark.slow  # over half a second: out of the fast loop
def test_every_event_that_touched_a_node_is_found_by_lineage(agent):
    with (agent / "state/events.jsonl").open("ab") as fh:
        fh.write(goal_pair(1) + goal_pair(2)
                 + line("event_s", "goal.status_changed", {"goal_id": "goal_2",
                                                            "status": "Done"})
                 + ops("event_so", "event_s", update("goal_2", status="Done"))
                 + ops("event_r", None, relate("goal_1", "blocks", "goal_2"))
                 + line("event_n", "observation.created", {"summary": "nothing folded"}))
    ids = _log_ids(agent)
    assert len(ids) == 8
    want = {"goal_1": ids[:2], "goal_2": ids[2:6]}  # created, changed (domain and ops)
    for node, events in want.items():
        by_node = _ok(agent, "lineage", node)
        assert by_node.startswith("# Lineage of")
        for short in events:
            assert _ok(agent, "lineage", short) == by_node, short
    # a relation's ops event stands for its first end, as printed by --json too
    assert _ok(agent, "lineage", ids[6]) == _ok(agent, "lineage", "goal_1")
    json_by_event = _ok(agent, "lineage", ids[1], "--json")
    assert json_by_event == _ok(agent, "lineage", "goal_1", "--json")


def test_an_event_that_touched_no_node_is_a_one_line_error(agent):
    with (agent / "state/events.jsonl").open("ab") as fh:
        fh.write(goal_pair(1) + line("event_n", "observation.created", {"summary": "x"}))
    proc = gasp(agent, "lineage", "event_n")
    err = proc.stderr.decode()
    assert proc.returncode != 0 and err.count("\n") == 1, err
    assert err.startswith("git gasp: error: event event_n created or changed no node"), err
    missing = gasp(agent, "lineage", "event_nothing")  # neither a node nor an event
    assert missing.returncode != 0
    assert "no node 'event_nothing'" in missing.stderr.decode(), out(missing)
