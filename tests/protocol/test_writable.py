"""What we write, we can read: serialize and writable_problem refuse what check 1 would."""

from __future__ import annotations

import pytest

from git_gasp.protocol.envelope import EnvelopeError, Event, parse_line, serialize, writable_problem


def event(payload, kind="note.added", **fields) -> Event:
    values = dict(id="event_1", schema_version=1, ts_ms=1, actor_kind="agent", actor_id="a",
                  kind=kind, payload=payload, causation_id=None, correlation_id=None)
    values.update(fields)
    return Event(**values)


def nested(levels: int) -> dict:
    value: dict = {}
    for _ in range(levels):
        value = {"k": value}
    return value


@pytest.mark.parametrize("payload, field", [
    ({"metadata": {"x": float("nan")}}, "payload.metadata.x"),
    ({"score": float("inf")}, "payload.score"),
    ({"n": 2**64}, "payload.n"),
    ({"n": -(2**63) - 1}, "payload.n"),
    ({"t": "ok \ud800"}, "payload.t"),
    ({"list": [1, {"deep": object()}]}, "payload.list[1].deep"),
    ({1: "x"}, "payload"),
    (nested(126), "payload.k"),
])
def test_serialize_refuses_what_check_1_would_refuse_naming_the_field(payload, field):
    with pytest.raises(EnvelopeError) as info:
        serialize(event(payload))
    assert str(info.value).startswith(field)


def test_envelope_fields_are_checked_too():
    with pytest.raises(EnvelopeError, match="ts_ms"):
        serialize(event({}, ts_ms=2**63))
    with pytest.raises(EnvelopeError, match="causation_id"):
        serialize(event({}, causation_id="\udcff"))


def test_every_line_serialize_accepts_parses_back():
    for payload in ({"n": 2**64 - 1}, {"n": -(2**63)}, {"f": 1e308}, nested(125), {"é": "ü"}):
        raw = serialize(event(payload))
        assert parse_line(raw[:-1]).payload == payload


@pytest.mark.parametrize("kind, payload, field", [
    ("goal.created", {"id": "goal_1", "title": 1}, "payload.title"),
    ("goal.created", {"title": "x"}, "payload.id"),
    ("goal.created", [], "payload"),
    ("eval.finished", {"id": "eval_1", "score": True}, "payload.score"),
    ("tool.called", {"id": "t", "success": "yes"}, "payload.success"),
    ("run.started", {"run_id": "r", "metadata": []}, "payload.metadata"),
])
def test_known_payload_fields_have_their_types(kind, payload, field):
    problem = writable_problem(event(payload, kind=kind))
    assert problem is not None and problem.startswith(field)


def test_well_typed_payloads_and_ops_pass():
    assert writable_problem(event({"id": "goal_1", "title": "t", "summary": None},
                                  kind="goal.created")) is None
    assert writable_problem(event([{"CreateNode": {}}], kind="state.ops_applied")) is None
