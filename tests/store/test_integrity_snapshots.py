"""A snapshot is never an authority: restore / fold / an open verify a snapshot's graph
against the fold of its prefix before seeding from it (once per clone, the verdict kept
in the git dir), and an interrupted snapshot is a note, never a lasting failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_gasp.runtime.state import AgentState
from git_gasp.store import snapshots
from tests.testing.events import goal_pair
from tests.testing.run import commit_all, gasp, git, out

pytestmark = pytest.mark.slow
SNAP = "snapshots/event_g2o/graph.json"


def _forge(agent: Path) -> None:
    """Two goals, a snapshot, then its graph edited with the integrity record kept."""
    with open(agent / "state/events.jsonl", "ab") as fh:
        fh.write(goal_pair(1) + goal_pair(2))
    assert gasp(agent, "snapshot").returncode == 0
    path = agent / SNAP
    doc = json.loads(path.read_bytes())
    doc["graph"]["nodes"]["goal_2"]["props"]["title"] = "forged"
    path.write_bytes((json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n").encode())


def test_fold_and_open_refuse_a_forged_snapshot(agent, tmp_path):
    _forge(agent)
    commit_all(agent, "a forged snapshot")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(agent), str(clone))

    proc = gasp(clone, "fold", "--json")
    assert proc.returncode == 0, out(proc)
    graph = json.loads(proc.stdout)
    assert graph["nodes"]["goal_2"]["props"]["title"] == "goal 2"  # the log's truth
    warnings = [ln for ln in proc.stderr.decode().splitlines() if SNAP in ln]
    assert len(warnings) == 1 and "not trusted" in warnings[0], out(proc)
    proc = gasp(clone, "fold")
    assert "seeded from" not in out(proc) and "not trusted" in out(proc)

    # the verdict is kept in the git dir, keyed by the graph.json's blob id
    blob = git(clone, "hash-object", SNAP).strip()
    assert (clone / ".git/gasp/snapshot-verdicts" / blob).is_file()

    state = AgentState.open(clone, use_snapshots=True)
    assert state.seeded_from is None
    assert state.graph.nodes["goal_2"]["props"]["title"] == "goal 2"
    assert any("not trusted" in n for n in state.notes)

    proc = gasp(clone, "check")
    assert proc.returncode == 1 and "snapshot graph differs" in out(proc)


def test_restore_does_not_seed_from_a_forged_snapshot(agent, tmp_path):
    _forge(agent)
    commit_all(agent, "a forged snapshot")
    proc = gasp(tmp_path, "restore", str(agent), str(tmp_path / "restored"))
    text = out(proc)
    assert proc.returncode == 0, text
    assert "not trusted" in text and "forged" not in text.replace(SNAP, "")


def test_an_honest_snapshot_still_seeds(agent, tmp_path):
    with open(agent / "state/events.jsonl", "ab") as fh:
        fh.write(goal_pair(1) + goal_pair(2))
    assert gasp(agent, "snapshot").returncode == 0
    commit_all(agent, "a snapshot")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(agent), str(clone))
    for _ in range(2):  # verified by folding once, then from the remembered verdict
        proc = gasp(clone, "fold")
        assert f"seeded from {SNAP}" in out(proc) and "not trusted" not in out(proc)
    assert AgentState.open(clone, use_snapshots=True).seeded_from == SNAP


def test_snapshot_dir_without_graph_json_is_a_note(agent):
    with open(agent / "state/events.jsonl", "ab") as fh:
        fh.write(goal_pair(1))
    (agent / "snapshots/event_g1o").mkdir(parents=True)  # a crash before graph.json
    proc = gasp(agent, "check")
    text = out(proc)
    assert proc.returncode == 0, text
    assert "note: snapshots/event_g1o: snapshot directory without graph.json" in text
    proc = gasp(agent, "check", "--strict")
    assert proc.returncode == 1 and "without graph.json" in out(proc)


def test_snapshot_leaves_no_directory_when_the_write_fails(agent, monkeypatch):
    with open(agent / "state/events.jsonl", "ab") as fh:
        fh.write(goal_pair(1))
    log = (agent / "state/events.jsonl").read_bytes()
    graph = AgentState.open(agent).graph

    def boom(path, *_args, **_kwargs):  # the directory is made, then the disk is full
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(snapshots, "atomic_write", boom)
    with pytest.raises(OSError):
        snapshots.write_snapshot(agent, log, graph, 2, "event_g1o")
    assert not (agent / "snapshots/event_g1o").exists()
