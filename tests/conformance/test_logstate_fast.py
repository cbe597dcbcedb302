"""What the log state's inline fast paths rely on, pinned: the shapes of the ops it
validates without `parse_op`, and that it decides every op as `parse_op` does."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from git_gasp.conformance.logsource import LogSource
from git_gasp.conformance.logstate import LogState
from git_gasp.protocol.envelope import OPS_KIND, Event
from git_gasp.protocol.ops import OP_FIELDS, OpError, parse_op
from git_gasp.protocol.vocab import Vocabulary

pytestmark = pytest.mark.slow  # keeps the fast loop under a minute


def test_the_inline_op_shapes_are_those_of_op_fields():
    assert OP_FIELDS["CreateNode"] == {"id": (str,), "kind": (str,), "props": (dict,)}
    assert OP_FIELDS["CreateRelation"] == {"from": (str,), "rel": (str,), "to": (str,),
                                           "props": (dict,)}
    assert OP_FIELDS["UpdateNode"] == {"id": (str,), "props": (dict,)}


field_values = st.sampled_from(["n1", 3, None, {}, {"a": 1}, [], True])
bodies = st.one_of(
    st.dictionaries(st.sampled_from(["id", "kind", "props", "from", "rel", "to", "reason",
                                     "x"]), field_values, max_size=5),
    st.sampled_from([None, "x", [], 5]),
)
ops = st.one_of(
    st.dictionaries(st.sampled_from(["CreateNode", "CreateRelation", "UpdateNode",
                                     "TombstoneNode", "Bogus"]), bodies, max_size=2),
    st.sampled_from([[], "op", None, 1]),
)


def _expected(op) -> tuple:
    try:
        tag, body = parse_op(op)
    except OpError as exc:
        return ("skip", str(exc))
    return ("ok", tag, body.get("kind"), body.get("rel"))


@settings(max_examples=400, deadline=None)
@given(op=ops)
def test_every_op_is_decided_as_parse_op_decides_it(op):
    state = LogState(LogSource.of_bytes(b""), Vocabulary())
    state.nodes["n1"] = 0  # UpdateNode of n1 applies; of anything else it is skipped
    state._ops(Event("e1", 1, 1, "agent", "a", OPS_KIND, [op], "c", None), 1)
    want = _expected(op)
    malformed = [msg for _line, missing, msg in state.skips if not missing]
    if want[0] == "skip":
        assert malformed == [f"event e1: op #1: {want[1]}"]
        assert not state.kinds and not state.rels
        return
    assert malformed == []
    _, tag, kind, rel = want
    assert state.kinds == ({kind} if tag == "CreateNode" else set())
    assert state.rels == ({rel} if tag == "CreateRelation" else set())
