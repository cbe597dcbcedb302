"""Goals and failures end as the session did: the replayed Claude Code session, recorded
through its hooks or imported from its transcript, ends with its failure Resolved (the
passing run after the fix) and its goal Achieved (the fix promoted), each change a
``*.status_changed`` event paired with its ops; `fold`, `gasp_ready` and `log` agree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_gasp.mcp.ready import ready
from git_gasp.runtime.state import AgentState
from tests.adapters.samples import CLAUDE_TRANSCRIPT
from tests.adapters.test_live import CLAUDE_HOOKS, payloads, replay
from tests.testing.run import gasp, out

pytestmark = pytest.mark.slow  # a hook process per payload of the session


def _events(repo: Path) -> list[dict]:
    return [json.loads(x) for x in (repo / "state/events.jsonl").read_text().splitlines()]


def _ends_as_the_session_did(repo: Path) -> None:
    check = gasp(repo, "check")
    assert check.returncode == 0, out(check)
    events = _events(repo)
    changed = [e for e in events if e["kind"].endswith(".status_changed")]
    assert [(e["kind"], e["payload"]["from"], e["payload"]["to"]) for e in changed] == [
        ("failure.status_changed", "Open", "Resolved"),
        ("goal.status_changed", "Open", "Achieved")]
    for e in changed:  # each paired with the ops making the change, as the spec says
        (pair,) = [o for o in events if o["causation_id"] == e["id"]
                   and o["kind"] == "state.ops_applied"]
        assert pair["payload"] == [{"UpdateNode": {"id": e["payload"]["id"], "props": {
            "status": e["payload"]["to"]}}}]
    promoted = next(i for i, e in enumerate(events) if e["kind"] == "decision.created")
    assert events.index(changed[1]) > promoted  # the goal ends after the promotion
    with AgentState.open(repo, "test") as state:
        nodes = state.graph.nodes
        kinds = {n["kind"]: n["props"]["status"] for n in nodes.values()
                 if n["kind"] in ("goal", "failure", "patch")}
        assert kinds == {"goal": "Achieved", "failure": "Resolved", "patch": "Promoted"}
        queue = ready(state.graph)
    assert queue["ready"] == [] and queue.get("blocked", []) == []
    fold = gasp(repo, "fold").stdout.decode()
    assert "open goals: none" in fold and "[Open]" not in fold


def test_hooks_end_the_goal_and_the_failure(agent):
    replay(agent, payloads(CLAUDE_HOOKS, agent))
    _ends_as_the_session_did(agent)
    log = gasp(agent, "log", "--kind", "*.status_changed").stdout.decode()
    assert "(Open → Achieved)" in log and "(Open → Resolved)" in log, log
    # the same payloads again (a replayed queue) change nothing
    before = (agent / "state/events.jsonl").read_bytes()
    replay(agent, payloads(CLAUDE_HOOKS, agent)[1:2])
    assert (agent / "state/events.jsonl").read_bytes() == before


def test_import_ends_them_the_same(agent):
    proc = gasp(agent, "import", "claude-code", str(CLAUDE_TRANSCRIPT))
    assert proc.returncode == 0, out(proc)
    _ends_as_the_session_did(agent)
