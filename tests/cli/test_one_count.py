"""One count: on a replayed Claude Code session, `fold`, `view` (its line and `--json`),
`log` and `status` agree on events, nodes and the last event, and name the layers they
count in the same words; every id they print is found by `log` (`--ops` for the ops
layer) and by `lineage` (an event as the node it created or changed)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.adapters.test_live import CLAUDE_HOOKS, payloads, replay
from tests.testing.run import gasp, out

pytestmark = pytest.mark.slow  # a hook process per payload of the session


def _ok(repo: Path, *args: str) -> str:
    proc = gasp(repo, *args)
    assert proc.returncode == 0, out(proc)
    return proc.stdout.decode()


def _log_ids(repo: Path, *args: str) -> list[str]:
    return [line.split()[0] for line in _ok(repo, "log", "--no-pager", *args).splitlines()]


def test_fold_view_log_and_status_count_the_same(agent, tmp_path):
    replay(agent, payloads(CLAUDE_HOOKS, agent))
    events = [json.loads(x) for x in (agent / "state/events.jsonl").read_text().splitlines()]
    ops = sum(e["kind"] == "state.ops_applied" for e in events)
    domain = len(events) - ops
    assert ops and domain
    phrase = f"{len(events)} events ({domain} domain, {ops} ops)"
    nodes = len(json.loads(_ok(agent, "fold", "--json"))["nodes"])
    last = events[-1]
    layer = "ops" if last["kind"] == "state.ops_applied" else "domain"
    every = _log_ids(agent, "--ops")  # newest first: one line per event of the log
    assert len(every) == len(events) and len(_log_ids(agent)) == domain
    short = every[0]
    assert last["id"].endswith(short.split("...")[1])
    tail = f"last {short} (line {len(events)}, {layer})"

    fold = _ok(agent, "fold").splitlines()
    assert fold[0] == f"state/events.jsonl: {phrase}, {tail}"
    assert fold[1].startswith(f"{nodes} nodes, ")

    page = tmp_path / "view.html"
    line = _ok(agent, "view", "-o", str(page), "--no-open")
    assert f": {phrase}, {nodes} nodes, {tail}; 1 run, the page lists" in line, line
    listed, rows, raw_nodes, raw_events = map(int, re.search(
        r"lists (\d+) nodes and (\d+) events and counts the other (\d+) nodes .* and "
        r"(\d+) events in their runs", line).groups())
    assert listed + raw_nodes == nodes and rows + raw_events == len(events)
    data = json.loads(_ok(agent, "view", "--json"))
    want = {"events": {"all": len(events), "domain": domain, "ops": ops}, "nodes": nodes,
            "last_event": {"id": last["id"], "line": len(events), "kind": last["kind"],
                           "layer": layer, "short": short}}
    assert {k: v for k, v in data["count"].items() if k != "text"} == want
    assert data["count"]["text"] == f"{phrase}, {nodes} nodes, {tail}"

    assert _ok(agent, "log", "--count").strip() == (
        f"{domain} events ({domain} domain, 0 ops); --ops adds {ops} ops events")
    assert _ok(agent, "log", "--count", "--ops").strip() == phrase

    status = _ok(agent, "status")
    assert f"count: {phrase}, {nodes} nodes, {tail}" in status.splitlines(), status
    status_json = json.loads(_ok(agent, "status", "--json"))["count"]
    assert status_json == data["count"]

    # every id printed is found: events by log (--ops for the ops layer), nodes by lineage
    assert short in every and short not in _log_ids(agent) and layer == "ops"
    # and events by lineage too, as the node they created or changed
    for event_short in (short, _log_ids(agent)[-1]):
        assert _ok(agent, "lineage", event_short).startswith("# Lineage of"), event_short
    for node in data["nodes"]:
        short_node = node["id"] if not node["t"] else \
            node["id"].split("_")[0] + "_..." + node["id"][-node["t"]:]
        assert _ok(agent, "lineage", short_node).startswith("# Lineage of"), short_node
    for goal in re.findall(r"^\s+(goal_\S+)\s", "\n".join(fold), re.M):
        assert _ok(agent, "lineage", goal)
