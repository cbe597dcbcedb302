"""`parse_canonical`: one orjson parse for the strict parse and check 1's canonical test.

It must give exactly what `parse_line` gives (the same event, or the same error), and
call a line canonical only when it is byte for byte what `serialize` writes; a line it
does not know to be canonical takes the full round trip (``rules.roundtrip_problem``).
Every rule of the strict parse gets a line here: spacing, key order, escapes, floats,
duplicate keys, CRLF, BOM, invalid UTF-8, integers beyond 64 bits, nesting depth.
"""

from __future__ import annotations

import json
import math
import random
import struct

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_gasp.conformance.rules import roundtrip_problem
from git_gasp.protocol import jsonstrict
from git_gasp.protocol.envelope import (
    EnvelopeError,
    Event,
    float_differs,
    parse_canonical,
    parse_line,
    serialize,
)
from git_gasp.protocol.jsonstrict import MAX_DEPTH, json_equal

SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _outcome(fn, raw: bytes):
    """(event as a dict, line) or the error message."""
    try:
        event = fn(raw, 7)
    except EnvelopeError as exc:
        return ("error", str(exc))
    except RecursionError:
        return ("recursion",)
    if isinstance(event, tuple):
        event = event[0]
    return ("event", event.to_dict(), event.line)


@pytest.fixture(autouse=True)
def _orjson_loaded(monkeypatch):
    """These tests are of the orjson fast path: load it from the first line on (a
    process's first lines take the stdlib path; `test_the_first_lines_...` below)."""
    monkeypatch.setattr(jsonstrict, "_orjson", orjson)


def check_one(raw: bytes):
    """Check 1's verdict on one line as the log pass reaches it (`logstate`): the
    parse outcome, then the round-trip problem unless the parse knew it canonical."""
    try:
        event, canonical = parse_canonical(raw, 7)
    except EnvelopeError as exc:
        return ("error", str(exc))
    except RecursionError:
        return ("recursion",)
    return ("event", event.to_dict(), None if canonical else roundtrip_problem(event))


def test_the_first_lines_a_process_parses_without_orjson_get_the_same_verdicts(
        monkeypatch):
    lines = [*HAND_LINES, CANONICAL[:-1], _line(payload=[1e-05]), _line(payload=[0.1, 2.5e300]),
             _line(payload={"z": "é😀\n", "a": -0.0})]
    fast = [check_one(raw) for raw in lines]
    monkeypatch.setattr(jsonstrict, "_orjson", None)
    monkeypatch.setattr(jsonstrict, "_parsed", 0)
    monkeypatch.setattr(jsonstrict, "STDLIB_CALLS", 10**9)
    slow = [check_one(raw) for raw in lines]
    assert jsonstrict._orjson is None  # orjson never loaded on this path
    for raw, a, b in zip(lines, fast, slow, strict=True):
        assert a[0] == b[0] and (a[0] != "event" or (json_equal(a[1], b[1]) and a[2] == b[2])), \
            (raw, a, b)
    assert sum(v[0] == "event" for v in slow) > 5 and sum(v[0] == "error" for v in slow) > 5


def test_orjson_loads_after_the_first_calls(monkeypatch):
    monkeypatch.setattr(jsonstrict, "_orjson", None)
    monkeypatch.setattr(jsonstrict, "_parsed", 0)
    seen = [jsonstrict.orjson_module() for _ in range(jsonstrict.STDLIB_CALLS + 2)]
    assert seen[:jsonstrict.STDLIB_CALLS] == [None] * jsonstrict.STDLIB_CALLS
    assert seen[-1] is orjson and seen[-2] is orjson


def _same_outcome(a, b) -> bool:
    if a[0] != "event" or b[0] != "event":
        return a == b
    return json_equal(a[1], b[1]) and a[2] == b[2]


def assert_agrees(raw: bytes) -> None:
    """parse_canonical parses `raw` as parse_line does, and calls it canonical only when
    it is serialize's bytes (and then, for these lines, it does)."""
    ours, theirs = _outcome(parse_canonical, raw), _outcome(parse_line, raw)
    assert _same_outcome(ours, theirs), (raw, ours, theirs)
    if ours[0] != "event":
        return
    event, canonical = parse_canonical(raw, 7)
    try:
        written = serialize(event)[:-1]
    except EnvelopeError:
        written = None
    if canonical:
        assert raw == written, raw
    elif written == raw:
        # not known: only a float orjson writes otherwise may hide a canonical line
        assert float_differs(raw) or orjson.dumps(orjson.loads(raw)) != raw, raw


def _line(payload=None, **over) -> bytes:
    obj = {"id": "e1", "schema_version": 1, "ts_ms": 5, "actor": {"kind": "agent", "id": "a"},
           "kind": "note.added", "payload": {"b": 1, "a": [1, {"y": 2, "x": 3}]}
           if payload is None else payload, "causation_id": None, "correlation_id": "c"}
    obj.update(over)
    return serialize(Event(obj["id"], obj["schema_version"], obj["ts_ms"],
                           obj["actor"]["kind"], obj["actor"]["id"], obj["kind"],
                           obj["payload"], obj["causation_id"], obj["correlation_id"]))[:-1]


CANONICAL = _line()
HAND_LINES = [
    CANONICAL,
    CANONICAL + b"\r",
    CANONICAL + b" ",
    b" " + CANONICAL,
    b"\xef\xbb\xbf" + CANONICAL,
    CANONICAL.replace(b'"a"', b'"\xff"'),  # invalid UTF-8 in an actor id
    CANONICAL.replace(b'"note.added"', b'"note.\xed\xa0\x80"'),  # an encoded surrogate
    CANONICAL.replace(b'"note.added"', b'"note.\\ud800"'),  # a lone surrogate escape
    CANONICAL.replace(b'"note.added"', b'"note.\\u0061dded"'),  # an escape for "a"
    CANONICAL.replace(b'"note.added"', b'"note\\/added"'),
    _line(payload={"t": "é\u2028\x1f\x7f\"\\"}),
    _line(payload={"t": "é"}).replace("é".encode(), b"\\u00e9"),
    json.dumps(json.loads(_line(payload={"t": "é✓"})), separators=(",", ":")).encode(),
    json.dumps(json.loads(CANONICAL)).encode(),  # spaced
    json.dumps(json.loads(CANONICAL), separators=(",", ":"), sort_keys=True).encode(),
    CANONICAL.replace(b'{"kind":"agent","id":"a"}', b'{"id":"a","kind":"agent"}'),
    CANONICAL.replace(b'{"b":1,', b'{"b":1,"b":1,'),  # a duplicate payload key
    CANONICAL.replace(b'"a":[1,', b'"a":[1,"x",').replace(b'"b":1,', b'"b":1,"a":0,'),
    CANONICAL.replace(b',"kind":"note.added"', b',"kind":"note.added","kind":"x"'),
    CANONICAL.replace(b'{"kind":"agent"', b'{"kind":"agent","kind":"agent"'),
    CANONICAL.replace(b'"ts_ms":5', b'"ts_ms":5,"ts_ms":5'),
    CANONICAL.replace(b'"ts_ms":5', b'"ts_ms":9223372036854775808'),
    CANONICAL.replace(b'"ts_ms":5', b'"ts_ms":-9223372036854775809'),
    CANONICAL.replace(b'"ts_ms":5', b'"ts_ms":5.0'),
    CANONICAL.replace(b'"ts_ms":5', b'"ts_ms":true'),
    CANONICAL.replace(b'"schema_version":1', b'"schema_version":0'),
    CANONICAL.replace(b'"schema_version":1', b'"schema_version":1e0'),
    CANONICAL.replace(b'"id":"e1"', b'"id":""'),
    CANONICAL.replace(b'"correlation_id":"c"', b'"correlation_id":3'),
    CANONICAL.replace(b'"causation_id":null', b'"causation_id":"c0"'),
    CANONICAL.replace(b',"correlation_id":"c"', b''),
    CANONICAL.replace(b'}', b',"extra":1}', 1),
    _line(payload=[18446744073709551615, -9223372036854775808]),
    _line(payload=[1]).replace(b"[1]", b"[18446744073709551616]"),
    _line(payload=[1]).replace(b"[1]", b"[-9223372036854775809]"),
    _line(payload=[1]).replace(b"[1]", b"[1" + b"0" * 5000 + b"]"),
    _line(payload=[1]).replace(b"[1]", b"[NaN]"),
    _line(payload=[1]).replace(b"[1]", b"[Infinity]"),
    _line(payload=[1]).replace(b"[1]", b"[1e999]"),
    _line(payload=[1]).replace(b"[1]", b"[1E5]"),
    _line(payload=[1]).replace(b"[1]", b"[1e5]"),
    _line(payload=[1]).replace(b"[1]", b"[01]"),
    _line(payload=[1]).replace(b"[1]", b"[-0]"),
    _line(payload=[1]).replace(b"[1]", b"[1.50]"),
    *(_line(payload=[x, {"k": x}]) for x in (0.5, 1e-05, 0.00001, 1.5e-07, 1e+20, 1e16, -0.0,
                                               0.1, 123.000001, 5e-324, 1.7976931348623157e308)),
    *(orjson.dumps(orjson.loads(_line(payload=[x, {"k": x}])))
      for x in (1e-05, 1.5e-07, 1e-300, 0.0001)),
    _line(payload={"text": "1e-5, [0.00001]"}),
    _line(payload=[[]] * 3),
    _line(payload=None) .replace(b'"payload":{', b'"payload": {'),
    b"",
    b"   ",
    b"{}",
    b"[1,2]",
    b"null",
    b'"text"',
    b"not json",
    CANONICAL[:-1],
]


@pytest.mark.parametrize("raw", HAND_LINES, ids=range(len(HAND_LINES)))
def test_every_strict_rule_is_decided_as_parse_line_decides_it(raw):
    assert_agrees(raw)


@pytest.mark.parametrize("depth", [MAX_DEPTH - 2, MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1,
                                   400, 2000])
def test_nesting_at_and_beyond_the_limit(depth):
    """The envelope is level 1: a payload nested `depth - 1` levels more."""
    for opener, closer in ((b"[", b"]"), (b'{"k":', b"}")):
        payload = opener * (depth - 1) + b"1" + closer * (depth - 1)
        raw = _line(payload=[0]).replace(b'"payload":[0]', b'"payload":' + payload)
        assert_agrees(raw)


def test_canonical_lines_are_known_canonical():
    event, canonical = parse_canonical(CANONICAL, 3)
    assert canonical and event.line == 3 and event.payload == {"b": 1, "a": [1, {"y": 2, "x": 3}]}


def test_a_float_only_the_round_trip_can_judge_is_not_called_canonical():
    raw = _line(payload=[1e-05])
    assert b"1e-05" in raw
    event, canonical = parse_canonical(raw)
    assert not canonical and event.payload == [1e-05]


scalars = (st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6)
           | st.sampled_from(["e-", "0.0000", "\\", '"', "\u2028", "\x00", "é"]))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=10)
texts = st.text(max_size=5)


@st.composite
def raw_lines(draw) -> bytes:
    """Lines near the canonical form: serialize's bytes, orjson's or json's of them, then
    maybe one byte-level change."""
    event = Event(draw(texts), draw(st.sampled_from([1, 2, 0, 2**63 - 1])),
                  draw(st.integers(-(2**63), 2**63 - 1)), draw(texts), draw(texts),
                  draw(st.sampled_from(["note.added", "state.ops_applied", "", "goal.created"])),
                  draw(values), draw(st.none() | texts), draw(st.none() | texts))
    try:
        raw = serialize(event)[:-1]
    except EnvelopeError:
        raw = orjson.dumps(event.to_dict(), default=str)
    style = draw(st.sampled_from(["canonical", "canonical", "orjson", "ascii", "spaced",
                                  "sorted", "bytes"]))
    if style == "orjson":
        raw = orjson.dumps(orjson.loads(raw))
    elif style == "ascii":
        raw = json.dumps(json.loads(raw), separators=(",", ":")).encode()
    elif style == "spaced":
        raw = json.dumps(json.loads(raw), ensure_ascii=False).encode()
    elif style == "sorted":
        raw = json.dumps(json.loads(raw), separators=(",", ":"), sort_keys=True,
                         ensure_ascii=False).encode()
    elif style == "bytes" and raw:
        at = draw(st.integers(0, len(raw) - 1))
        edit = draw(st.sampled_from([b"", b" ", b"\r", b'"', b"\\", b",", b"\xff", b"0", b"}"]))
        raw = raw[:at] + edit + raw[at + draw(st.integers(0, 2)):]
    return raw


@pytest.mark.slow  # over half a second: out of the fast loop
@SETTINGS
@given(raw=raw_lines())
def test_near_canonical_lines_agree_with_parse_line(raw):
    assert_agrees(raw)


objects = st.fixed_dictionaries({}, optional={
    "id": st.sampled_from(["e", "", 1, None]),
    "schema_version": st.sampled_from([1, 0, 2**63 - 1, 2**63, 1.0, True, "1"]),
    "ts_ms": st.sampled_from([0, -(2**63), 2**63 - 1, 2**63, -(2**63) - 1, 1.5, False]),
    "actor": st.sampled_from([{"kind": "a", "id": "b"}, {"id": "b", "kind": "a"},
                              {"kind": "a"}, {"kind": 1, "id": "b"}, {"kind": "a", "id": None},
                              {"kind": "a", "id": "b", "x": 1}, [], "a"]),
    "kind": st.sampled_from(["k", "", 3]),
    "payload": values,
    "causation_id": st.sampled_from([None, "c", 1, ""]),
    "correlation_id": st.sampled_from([None, "c", [], ""]),
    "extra": st.just(1),
})


@SETTINGS
@given(obj=objects)
def test_every_envelope_field_is_validated_as_event_from_json_does(obj):
    """Compact lines (the fast case's layout) with each field right or wrong."""
    assert_agrees(json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode())


def _json(value) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode()


def test_float_differs_finds_every_float_orjson_writes_otherwise():
    """In every place compact JSON puts a number, and with strings beside it."""
    rng = random.Random(20261201)
    samples = [float(f"{m}e{e}") for e in range(-330, 309) for m in (1, 1.5, 9.99, 2.225)]
    samples += [10.00001, 123.000001, -0.00001, 1e16, 5e-324]
    for _ in range(20_000):
        x = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
        samples.append(round(x, rng.randint(0, 8)) if abs(x) < 1e10 else x)
    for x in samples:
        if not math.isfinite(x) or orjson.dumps(x) == _json(x):
            continue
        for value in ({"a": x}, [x], [1, x], [x, 2], {"e-": "4e-", "z": [x]}, {"a": [{"b": x}]}):
            assert float_differs(orjson.dumps(value)), value


def test_float_differs_passes_lines_without_such_numbers():
    assert not float_differs(CANONICAL)
    assert not float_differs(b'{"id":"event_7fa86914-d62c-4ab7-8c4e-8c83b87772be","x":[1e+20]}')
    assert float_differs(b'{"x":"1e-5,"}')  # a false alarm inside a string: only slower
