"""Property-based tests (hypothesis) of the strict parser, the fold and snapshot integrity."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_gasp.protocol.envelope import (
    I64_MAX,
    I64_MIN,
    OPS_KIND,
    EnvelopeError,
    Event,
    parse_line,
    parse_log,
    serialize,
    split_lines,
)
from git_gasp.protocol.fold import FoldError, fold
from git_gasp.protocol.graph import Graph
from git_gasp.protocol.jsonstrict import INT_MAX, INT_MIN, json_equal
from git_gasp.protocol.ops import NEEDS_NODE
from git_gasp.protocol.snapshot import integrity_for, verify_integrity

pytestmark = pytest.mark.slow  # hypothesis

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# --------------------------------------------------------------------------- strategies

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=INT_MIN, max_value=INT_MAX)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=25,
)
opt_text = st.none() | st.text()


@st.composite
def events(draw, payload=json_values, kind=None) -> Event:
    return Event(
        draw(st.text(min_size=1)),
        draw(st.integers(min_value=1, max_value=I64_MAX)),
        draw(st.integers(min_value=I64_MIN, max_value=I64_MAX)),
        draw(st.text()),
        draw(st.text()),
        draw(kind if kind is not None else st.text(min_size=1)),
        draw(payload),
        draw(opt_text),
        draw(opt_text),
    )


def serialize_json(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


# --------------------------------------------------------------------------- parser


@SETTINGS
@given(events())
def test_serialize_then_parse_round_trips(event):
    raw = serialize(event)
    assert raw.endswith(b"\n") and b"\n" not in raw[:-1]
    again = parse_line(raw[:-1], 7)
    assert again.line == 7
    assert json_equal(again.to_dict(), event.to_dict())
    # Canonical bytes are a fixed point.
    assert serialize(again) == raw


@SETTINGS
@given(st.binary(max_size=2048))
def test_parse_line_on_arbitrary_bytes_raises_only_envelope_error(raw):
    try:
        event = parse_line(raw, 1)
    except EnvelopeError as exc:
        assert str(exc)
        return
    # Anything accepted is a real envelope that round-trips.
    assert json_equal(parse_line(serialize(event)[:-1]).to_dict(), event.to_dict())


NASTY = [
    b"NaN", b"Infinity", b"-Infinity", b"1e999", b"-1e999", b"18446744073709551616",
    b"-9223372036854775809", b"9" * 5000, b'"\\ud800"', b'"\\udfff"', b"\xef\xbb\xbf", b"\r",
    b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\x00", b"[" * 200, b"{" * 200, b'"a":1,"a":2',
    b",", b":", b"}", b"]", b'"', b"\\", b"null", b"true", b" ", b"\t", b"\n", b"0", b"-0",
    b"01", b"1.", b".5", b"1e", b"\"\x01\"",
]


@st.composite
def mutated_lines(draw) -> bytes:
    raw = bytearray(serialize(draw(events()))[:-1])
    for _ in range(draw(st.integers(1, 3))):
        pos = draw(st.integers(0, len(raw)))
        how = draw(st.sampled_from(["insert", "replace", "truncate", "flip"]))
        if how == "insert":
            raw[pos:pos] = draw(st.sampled_from(NASTY) | st.binary(max_size=8))
        elif how == "replace":
            end = draw(st.integers(pos, min(len(raw), pos + 8)))
            raw[pos:end] = draw(st.sampled_from(NASTY) | st.binary(max_size=8))
        elif how == "truncate":
            del raw[pos:]
        elif raw and pos < len(raw):
            raw[pos] ^= 1 << draw(st.integers(0, 7))
    return bytes(raw)


@SETTINGS
@given(mutated_lines())
def test_parse_line_on_mutated_valid_lines_raises_only_envelope_error(raw):
    try:
        event = parse_line(raw, 1)
    except EnvelopeError as exc:
        assert str(exc)
        return
    again = parse_line(serialize(event)[:-1])
    assert json_equal(again.to_dict(), event.to_dict())


@SETTINGS
@given(st.lists(st.binary(max_size=200) | mutated_lines(), max_size=8), st.booleans())
def test_parse_log_never_raises_and_accounts_for_every_line(chunks, terminated):
    data = b"\n".join(chunks) + (b"\n" if terminated and chunks else b"")
    parsed = parse_log(data)
    lines, ends_with_newline = split_lines(data)
    assert parsed.line_count == len(lines)
    assert parsed.terminated == ends_with_newline
    good = {e.line for e in parsed.events}
    bad = {e.line for e in parsed.errors}
    assert good | bad == set(range(1, len(lines) + 1))
    # Only an unterminated last line may be both parsed and reported.
    assert good & bad <= ({len(lines)} if not ends_with_newline else set())
    assert [e.line for e in parsed.events] == sorted(good)


def _dup_key_json(value: object, target: int, counter: list[int], twin: object) -> str:
    """Compact JSON of value; object number `target` (pre-order) repeats its first key."""
    if type(value) is dict:
        index = counter[0]
        counter[0] += 1
        parts = [serialize_json(k) + ":" + _dup_key_json(v, target, counter, twin)
                 for k, v in value.items()]
        if index == target and value:
            first = next(iter(value))
            parts.append(serialize_json(first) + ":" + serialize_json(twin))
        return "{" + ",".join(parts) + "}"
    if type(value) is list:
        return "[" + ",".join(_dup_key_json(v, target, counter, twin) for v in value) + "]"
    return serialize_json(value)


def _objects_in_preorder(value: object) -> list[dict]:
    """Every object of a JSON value in the order _dup_key_json numbers them."""
    stack, out = [value], []
    while stack:
        v = stack.pop()
        if type(v) is dict:
            out.append(v)
            stack.extend(reversed(list(v.values())))
        elif type(v) is list:
            stack.extend(reversed(v))
    return out


@SETTINGS
@given(events(), st.data())
def test_a_duplicate_key_anywhere_is_rejected(event, data):
    doc = event.to_dict()
    # The envelope, actor and every non-empty payload object can carry a duplicate.
    candidates = [i for i, obj in enumerate(_objects_in_preorder(doc)) if obj]
    target = data.draw(st.sampled_from(candidates))
    twin = data.draw(json_values)
    raw = _dup_key_json(doc, target, [0], twin).encode()
    with pytest.raises(EnvelopeError, match="duplicate key"):
        parse_line(raw)


# --------------------------------------------------------------------------- fold

IDS = ["a", "b", "c"]
node_ids = st.sampled_from(IDS)
nested_props = st.recursive(json_scalars, lambda inner: st.dictionaries(
    st.sampled_from(["x", "y", "z"]), inner, min_size=1, max_size=3), max_leaves=6)
small_props = st.dictionaries(  # half the values are objects, so deep merges happen
    st.sampled_from(["status", "meta"]),
    st.dictionaries(st.sampled_from(["x", "y", "z"]), nested_props, min_size=1, max_size=3)
    | json_scalars,
    max_size=3,
)
artifacts = st.fixed_dictionaries({
    "kind": st.sampled_from(["file", "url"]),
    "uri": st.text(max_size=8),
    "hash": st.none() | st.text(max_size=8),
    "summary": st.none() | st.text(max_size=8),
    "metadata": small_props,
})
reasons = st.text(max_size=8)
ops = st.one_of(
    st.builds(lambda i, k, p: {"CreateNode": {"id": i, "kind": k, "props": p}},
              node_ids, st.sampled_from(["goal", "task"]), small_props),
    st.builds(lambda i, p: {"UpdateNode": {"id": i, "props": p}}, node_ids, small_props),
    st.builds(lambda i, r: {"TombstoneNode": {"id": i, "reason": r}}, node_ids, reasons),
    st.builds(lambda i, r: {"MarkStale": {"id": i, "reason": r}}, node_ids, reasons),
    st.builds(lambda i, a: {"AttachArtifact": {"id": i, "artifact": a}}, node_ids, artifacts),
    st.builds(lambda f, r, t, p: {"CreateRelation": {"from": f, "rel": r, "to": t, "props": p}},
              node_ids, st.sampled_from(["advances", "blocks"]), node_ids, small_props),
    st.builds(lambda f, r, t: {"DeleteRelation": {"from": f, "rel": r, "to": t}},
              node_ids, st.sampled_from(["advances", "blocks"]), node_ids),
)


@st.composite
def logs(draw, max_events: int = 12) -> list[Event]:
    """Events in line order: mostly state.ops_applied, some domain events (ignored)."""
    out = []
    for n in range(1, draw(st.integers(0, max_events)) + 1):
        if draw(st.integers(0, 4)) == 0:
            out.append(Event(f"e{n}", 1, n, "agent", "x", "note.created",
                             draw(st.lists(ops, max_size=2)), None, None, n))
        else:
            out.append(Event(f"e{n}", 1, n, "agent", "x", OPS_KIND,
                             draw(st.lists(ops, max_size=4)), None, None, n))
    return out


def _expected_skips(evs: list[Event]) -> tuple[list[tuple[int, int]], int]:
    """(line, 1-based op index) of ops needing a node that does not exist yet; op count."""
    exists: set[str] = set()
    skips, total = [], 0
    for e in evs:
        if e.kind != OPS_KIND:
            continue
        for i, op in enumerate(e.payload, 1):
            ((tag, body),) = op.items()
            total += 1
            if tag == "CreateNode":
                exists.add(body["id"])
            elif tag in NEEDS_NODE and body["id"] not in exists:
                skips.append((e.line, i))
    return skips, total


def _merge_model(dst: dict, src: dict) -> dict:
    out = copy.deepcopy(dst)
    for k, v in src.items():
        if type(v) is dict and type(out.get(k)) is dict:
            out[k] = _merge_model(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def _model_fold(evs: list[Event]) -> dict:
    """A deliberately naive reference fold (DESIGN §3) over deep copies."""
    nodes: dict = {}
    relations: list = []
    version = 0
    for e in evs:
        if e.kind != OPS_KIND:
            continue
        for op in copy.deepcopy(e.payload):
            ((tag, b),) = op.items()
            if tag == "CreateNode":
                nodes[b["id"]] = {"id": b["id"], "kind": b["kind"], "props": b["props"],
                                  "stale": False, "tombstoned": False, "artifacts": []}
            elif tag == "CreateRelation":
                relations.append({"from": b["from"], "rel": b["rel"], "to": b["to"],
                                  "props": b["props"]})
            elif tag == "DeleteRelation":
                relations = [r for r in relations
                             if (r["from"], r["rel"], r["to"]) != (b["from"], b["rel"], b["to"])]
            elif b["id"] not in nodes:
                continue
            elif tag == "UpdateNode":
                nodes[b["id"]]["props"] = _merge_model(nodes[b["id"]]["props"], b["props"])
            elif tag == "TombstoneNode":
                nodes[b["id"]]["tombstoned"] = True
                nodes[b["id"]]["props"]["tombstone_reason"] = b["reason"]
            elif tag == "MarkStale":
                nodes[b["id"]]["stale"] = True
                nodes[b["id"]]["props"]["stale_reason"] = b["reason"]
            else:
                nodes[b["id"]]["artifacts"].append(b["artifact"])
            version += 1
    return {"nodes": nodes, "relations": relations, "version": version}


@SETTINGS
@given(logs())
def test_lenient_fold_matches_the_model_and_skips_exactly_the_dangling_ops(evs):
    before = copy.deepcopy([e.to_dict() for e in evs])
    result = fold(evs)
    expected_skips, total = _expected_skips(evs)
    assert [(s.line, s.index) for s in result.skipped] == expected_skips
    assert all(s.event_id == f"e{s.line}" and "does not exist" in s.reason
               for s in result.skipped)
    assert result.graph.version == total - len(expected_skips)
    assert json_equal(result.graph.to_json(), _model_fold(evs))
    assert result.last_event_id == (evs[-1].id if evs else None)
    # Folding never mutates the events it read.
    assert json_equal([e.to_dict() for e in evs], before)


@SETTINGS
@given(node_ids, small_props, st.lists(small_props, min_size=1, max_size=4))
def test_updates_deep_merge_like_the_model(node, created, updates):
    evs = [Event("e1", 1, 1, "agent", "x", OPS_KIND,
                 [{"CreateNode": {"id": node, "kind": "goal", "props": created}}]
                 + [{"UpdateNode": {"id": node, "props": p}} for p in updates], None, None, 1)]
    before = copy.deepcopy(evs[0].payload)
    graph = fold(evs, strict=True).graph
    assert json_equal(graph.to_json(), _model_fold(evs))
    assert json_equal(evs[0].payload, before)


@SETTINGS
@given(logs())
def test_strict_fold_raises_iff_the_lenient_fold_skipped(evs):
    lenient = fold(evs)
    try:
        strict = fold(evs, strict=True)
    except FoldError as exc:
        assert lenient.skipped, "strict fold failed where the lenient fold skipped nothing"
        assert exc.skipped == lenient.skipped[0]
    else:
        assert not lenient.skipped
        assert strict.graph.same_as(lenient.graph)


@SETTINGS
@given(logs(), st.data())
def test_folding_in_two_chunks_equals_one_fold(evs, data):
    cut = data.draw(st.integers(0, len(evs)))
    whole = fold(evs)
    first = fold(evs[:cut])
    seed = first.graph.copy()
    rest = fold(evs[cut:], graph=seed)
    assert rest.graph is seed
    assert rest.graph.same_as(whole.graph)
    assert first.skipped + rest.skipped == whole.skipped
    # Folding on from the copy left the first graph as it was.
    assert first.graph.same_as(fold(evs[:cut]).graph)


@SETTINGS
@given(logs())
def test_graph_json_round_trips(evs):
    graph = fold(evs).graph
    direct = Graph.from_json(graph.to_json())
    assert direct.same_as(graph)
    through_text = Graph.from_json(json.loads(json.dumps(graph.to_json())))
    assert through_text.same_as(graph)
    assert json_equal(through_text.to_json(), graph.to_json())


@SETTINGS
@given(logs(), st.lists(st.sampled_from([
    "not a list", {"NoSuchOp": {}}, {"CreateNode": {"id": "a"}}, {"UpdateNode": {"id": 1,
    "props": {}}}, [], {"CreateNode": {}, "UpdateNode": {}}, None,
]), min_size=1, max_size=3), st.data())
def test_malformed_ops_are_skipped_with_their_position_and_never_raise(evs, bad, data):
    line = len(evs) + 1
    payload = "not a list" if bad[0] == "not a list" else [b for b in bad if b != "not a list"]
    evs = [*evs, Event(f"e{line}", 1, line, "agent", "x", OPS_KIND, payload, None, None, line)]
    result = fold(evs)
    mine = [s for s in result.skipped if s.line == line]
    if payload == "not a list":
        assert [(s.index, s.reason) for s in mine] == [(0, "payload must be an array of ops")]
    else:
        assert [s.index for s in mine] == list(range(1, len(payload) + 1))
    with pytest.raises(FoldError):
        fold(evs, strict=True)


# --------------------------------------------------------------------------- snapshot


def _log_bytes(evs: list[Event]) -> bytes:
    return b"".join(serialize(e) for e in evs)


@SETTINGS
@given(logs(max_events=10).filter(bool), st.data())
def test_integrity_accepts_the_true_prefix_and_rejects_an_edited_earlier_line(evs, data):
    log = _log_bytes(evs)
    count = data.draw(st.integers(1, len(evs)))
    rec = integrity_for(log, count, evs[count - 1].id)
    assert verify_integrity(log, rec, evs[count - 1].id) is None
    # Appending to the log keeps the record valid: snapshots survive growth.
    more = log + serialize(Event("later", 1, 0, "a", "b", "note.created", {}, None, None))
    assert verify_integrity(more, rec, evs[count - 1].id) is None
    # Editing any line inside the prefix (even by one byte, even keeping it valid) fails.
    victim = data.draw(st.integers(0, count - 1))
    edited = copy.copy(evs[victim])
    edited.ts_ms = evs[victim].ts_ms + 1
    changed = _log_bytes([*evs[:victim], edited, *evs[victim + 1:]])
    assert verify_integrity(changed, rec, evs[count - 1].id) is not None
    # Dropping a line inside the prefix fails too.
    dropped = _log_bytes([*evs[:victim], *evs[victim + 1:]])
    assert verify_integrity(dropped, rec, evs[count - 1].id) is not None
    # A different event id at the boundary fails.
    assert verify_integrity(log, rec, evs[count - 1].id + "x") is not None


@SETTINGS
@given(logs(max_events=10), st.data())
def test_fold_from_a_snapshot_prefix_equals_the_full_fold(evs, data):
    log = _log_bytes(evs)
    parsed = parse_log(log)
    assert parsed.errors == []
    count = data.draw(st.integers(0, len(evs)))
    doc = json.loads(json.dumps(fold(parsed.events[:count]).graph.to_json()))
    seeded = fold(parsed.events[count:], graph=Graph.from_json(doc))
    assert seeded.graph.same_as(fold(parsed.events).graph)
    assert seeded.graph.same_as(fold(evs).graph)
