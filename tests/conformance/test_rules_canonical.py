"""Check 1's fast path: what `is_canonical_line` relies on about orjson and the json
module, pinned, and the fast path agreeing with the full round trip."""

from __future__ import annotations

import json
import math
import random
import struct

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from git_gasp.conformance.rules import is_canonical_line, roundtrip_problem
from git_gasp.protocol.envelope import Event, parse_line, serialize

pytestmark = pytest.mark.slow  # hypothesis


def _json(value) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode()


def test_orjson_writes_every_string_as_the_json_module_does():
    """Every code point (escaping is per character: a run of them compares at once)."""
    points = [chr(cp) for cp in range(0x110000) if not 0xD800 <= cp < 0xE000]
    runs = ["".join(points[i:i + 512]) for i in range(0, len(points), 512)]
    assert [r for r in runs if orjson.dumps(r) != _json(r)] == []


def test_orjson_floats_differ_only_with_e_minus_or_four_zeros():
    rng = random.Random(20251201)
    samples = [float(f"{m}e{e}") for e in range(-320, 308) for m in (1, 1.5, 9.99, 2.225)]
    for _ in range(60_000):
        x = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
        samples.append(round(x, rng.randint(0, 6)) if abs(x) < 1e10 else x)
    for x in samples:
        if math.isfinite(x):
            ours = orjson.dumps(x)
            assert ours == _json(x) or b"e-" in ours or b"0.0000" in ours, x


def test_orjson_sorts_keys_as_the_json_module_does():
    keys = ["b", "a", "\uffff", "\U00010000", "é", "Z", "", "aa", "\x00", "\U0010ffff"]
    value = {k: {k2: 1 for k2 in reversed(keys)} for k in keys}
    assert orjson.dumps(value, option=orjson.OPT_SORT_KEYS) == _json(value)


scalars = st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text(max_size=8) \
    | st.floats(allow_nan=False, allow_infinity=False)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(payload=values, key_order=st.booleans(), eid=st.text(min_size=1, max_size=6))
def test_a_line_the_fast_path_passes_is_what_serialize_writes(payload, key_order, eid):
    event = Event(eid, 1, 1, "agent", "a", "note.added", payload, None, None)
    try:
        canonical = serialize(event)[:-1]
    except Exception:  # noqa: BLE001 - not writable: nothing to check
        return
    for raw in {canonical, orjson.dumps(json.loads(canonical)),
                json.dumps(json.loads(canonical), ensure_ascii=key_order).encode()}:
        try:
            parsed = parse_line(raw, 1)
        except Exception:  # noqa: BLE001
            continue
        if is_canonical_line(parsed, raw):
            assert raw == serialize(parsed)[:-1]
            assert roundtrip_problem(parsed) is None


no_floats = st.recursive(st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1)
                         | st.text(max_size=8),
                         lambda inner: st.lists(inner, max_size=3)
                         | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                         max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(payload=no_floats, eid=st.text(min_size=1, max_size=6), cause=st.none() | st.text())
def test_what_serialize_writes_without_floats_takes_the_fast_path(payload, eid, cause):
    event = Event(eid, 1, 1, "agent", "a", "note.added", payload, cause, None)
    try:
        raw = serialize(event)[:-1]
    except Exception:  # noqa: BLE001 - not writable (a lone surrogate): nothing to check
        return
    assert is_canonical_line(parse_line(raw, 1), raw)
