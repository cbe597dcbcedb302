"""Random logs for the log-state property tests: valid and invalid lines of every kind
checks 1, 2, 3, 5 and 7 look at, over a few shared ids so that duplicates, forward and
missing causations, claims, restatements and missing nodes all happen."""

from __future__ import annotations

import json

from hypothesis import strategies as st

from git_gasp.protocol.envelope import OPS_KIND

IDS = ["e1", "e2", "e3", "e4", "e5", "e6"]
NODES = ["n1", "n2", "n3"]
DOMAIN = ["goal.created", "patch.proposed", "eval.finished", "decision.created"]
OTHER = ["run.started", "note.added", "tool.called", "x.created"]
NODE_KINDS = ["goal", "patch", "eval", "decision", "widget", "gadget"]  # last two: packs
RELS = ["advances", "validated_by", "wires", "bogus_rel"]  # wires: a pack's
STATUSES = ["Open", "Passed", "Proposed", 3, None]

# A pack declaring the widget kind (with a required prop) and the wires relation.
PACK = json.dumps({"name": "widgets", "object_types": {"widget": {"required_props": ["size"]}},
                   "relation_types": {"wires": {}}}).encode()

node_ids = st.sampled_from(NODES + ["zz"])
props = st.fixed_dictionaries({}, optional={"status": st.sampled_from(STATUSES),
                                            "size": st.integers(0, 3),
                                            "score": st.sampled_from([0.5, 1e-05, 2.5e-07])})
ops_list = st.lists(st.one_of(
    st.builds(lambda i, k, p: {"CreateNode": {"id": i, "kind": k, "props": p}},
              node_ids, st.sampled_from(NODE_KINDS), props),
    st.builds(lambda i, p: {"UpdateNode": {"id": i, "props": p}}, node_ids, props),
    st.builds(lambda i: {"TombstoneNode": {"id": i, "reason": "r"}}, node_ids),
    st.builds(lambda i: {"MarkStale": {"id": i, "reason": "r"}}, node_ids),
    st.builds(lambda i: {"AttachArtifact": {"id": i, "artifact": {
        "kind": "file", "uri": "u", "hash": None, "summary": None, "metadata": {}}}}, node_ids),
    st.builds(lambda a, r, b: {"CreateRelation": {"from": a, "rel": r, "to": b, "props": {}}},
              node_ids, st.sampled_from(RELS), node_ids),
    st.builds(lambda a, b: {"DeleteRelation": {"from": a, "rel": "advances", "to": b}},
              node_ids, node_ids),
    st.sampled_from([{"Bogus": {}}, {"CreateNode": {"id": "n1"}}, {"CreateNode": 5}, [],
                     {"CreateNode": {"id": 7, "kind": "goal", "props": {}}}]),
), max_size=3)
entity_payloads = st.one_of(
    st.builds(lambda i, s: {"id": i, **({"status": s} if s != "-" else {})},
              node_ids, st.sampled_from(["-", "Open", "Passed", 3])),
    st.sampled_from([{}, {"id": 5}, [], "text"]),
)
causes = st.one_of(st.none(), st.sampled_from(IDS + ["nowhere"]))


def _event(eid: str, kind: str, payload, cause) -> dict:
    return {"id": eid, "schema_version": 1, "ts_ms": 1, "actor": {"kind": "agent", "id": "a"},
            "kind": kind, "payload": payload, "causation_id": cause, "correlation_id": None}


def _canonical(obj: dict) -> bytes:
    head = {k: obj[k] for k in ("id", "schema_version", "ts_ms", "actor", "kind")}
    tail = {k: obj[k] for k in ("causation_id", "correlation_id")}
    return (json.dumps(head, separators=(",", ":"), ensure_ascii=False)[:-1] + ',"payload":'
            + json.dumps(obj["payload"], sort_keys=True, separators=(",", ":"),
                         ensure_ascii=False)
            + "," + json.dumps(tail, separators=(",", ":"))[1:]).encode()


events = st.one_of(
    st.builds(lambda i, p, c: _event(i, OPS_KIND, p, c), st.sampled_from(IDS), ops_list, causes),
    st.builds(lambda i, c: _event(i, OPS_KIND, {"not": "a list"}, c), st.sampled_from(IDS),
              causes),
    st.builds(lambda i, k, p, c: _event(i, k, p, c), st.sampled_from(IDS),
              st.sampled_from(DOMAIN), entity_payloads, causes),
    st.builds(lambda i, k, c: _event(i, k, {"x": 1}, c), st.sampled_from(IDS),
              st.sampled_from(OTHER), causes),
)
styles = st.sampled_from(["canonical"] * 6 + ["spaced", "unsorted", "crlf", "orjson"])
bad_lines = st.sampled_from([
    b"not json", b"", b"   ", b'{"id":"e1","id":"e2"}', b'{"id":"e9","kind":"note.added"}',
    b"[1,2]", b'{"id":"e1","schema_version":1,"ts_ms":1,"actor":{"kind":"a","id":"b"},'
              b'"kind":"note.added","payload":{},"causation_id":null,"correlation_id":null,'
              b'"extra":1}',
])


@st.composite
def lines(draw) -> bytes:
    """One physical line (without its newline)."""
    if draw(st.integers(0, 9)) == 0:
        return draw(bad_lines)
    obj = draw(events)
    style = draw(styles)
    if style == "spaced":
        return json.dumps(obj, separators=(", ", ": ")).encode()
    if style == "unsorted" and type(obj["payload"]) is dict:
        obj = {**obj, "payload": dict(reversed(list(obj["payload"].items())))}
        return json.dumps(obj, separators=(",", ":")).encode()
    raw = _canonical(obj)
    if style == "orjson":  # canonical layout, orjson's number format (0.00001, not 1e-05)
        import orjson

        return orjson.dumps(orjson.loads(raw))
    return raw + b"\r" if style == "crlf" else raw


@st.composite
def logs(draw, max_lines: int = 14) -> bytes:
    """A whole log: lines, and sometimes a last line without its newline."""
    body = draw(st.lists(lines(), max_size=max_lines))
    data = b"".join(raw + b"\n" for raw in body)
    ending = draw(st.sampled_from(["", "", "", "torn", "complete"]))
    if ending == "torn":
        data += b'{"id":"e3","kind'
    elif ending == "complete":
        data += draw(lines())
    return data
