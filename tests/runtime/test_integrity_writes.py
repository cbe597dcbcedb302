"""Issue 10: EventStore.append is the one write gate: a batch with any event check 1
could not read back (or a known payload field of the wrong type) raises WriteRefused,
a FormatError naming the field, and nothing of the batch is written."""

from __future__ import annotations

import math

import pytest

from git_gasp.base.errors import FormatError
from git_gasp.runtime.state import AgentState, create_node
from git_gasp.store.append import WriteRefused
from tests.runtime.helpers import assert_conformant

pytestmark = pytest.mark.slow  # the agent fixture and `git gasp check`


def open_state(agent):
    return AgentState.open(agent, "tester-worker", fsync=False)


@pytest.mark.parametrize("call, field", [
    (lambda s: s.record_goal(title=1), "payload.title"),
    (lambda s: s.record_goal("t", metadata={"x": 2**70}), "payload.metadata.x"),
    (lambda s: s.record_goal("t", metadata={"x": math.nan}), "payload.metadata.x"),
    (lambda s: s.record_goal("t", metadata={"x": "\ud800"}), "payload.metadata.x"),
    (lambda s: s.record_goal("t", summary=["not", "text"]), "payload.summary"),
    (lambda s: s.emit("note.created", {"id": "n", "score": "high"}), "payload.score"),
    (lambda s: s.apply_ops([create_node("goal_x", "goal", {"title": "t", "v": math.inf})]),
     "payload[0].CreateNode.props.v"),
])
def test_a_refused_event_raises_and_writes_nothing(agent, call, field):
    log = agent / "state/events.jsonl"
    before = log.read_bytes()
    state = open_state(agent)
    nodes = set(state.graph.nodes)
    with pytest.raises(WriteRefused) as info:
        call(state)
    assert isinstance(info.value, FormatError)
    assert info.value.field == field and info.value.problem.startswith(f"{field}: ")
    assert "nothing was written" in str(info.value)
    assert log.read_bytes() == before
    assert set(state.graph.nodes) == nodes  # nothing applied in memory either
    state.record_goal("after")  # the state stays usable
    state.release()
    assert_conformant(agent)


def test_the_whole_batch_is_refused_when_its_second_event_is_bad(agent):
    """The ops event (deeper than the domain event) alone breaks the rule: neither is
    written, and the refusal is raised before a before_append side effect runs."""
    log = agent / "state/events.jsonl"
    before = log.read_bytes()
    state = open_state(agent)
    deep: dict = {}
    for _ in range(122):  # 123 levels: 125 in the domain line, 128 in the ops line
        deep = {"x": deep}
    ran = []
    with pytest.raises(WriteRefused) as info:
        state.record_decision("Rejected", "r", metadata=deep,
                              before_append=lambda: ran.append(1))
    assert info.value.event.kind == "state.ops_applied"
    assert "nested too deeply" in info.value.problem
    assert ran == [] and log.read_bytes() == before
    state.release()
