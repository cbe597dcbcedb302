"""Unit tests of the pure protocol layer: envelope, ops, fold, manifest, identity, packs."""

from __future__ import annotations

import hashlib
import subprocess

import pytest

from git_gasp.protocol.envelope import EnvelopeError, parse_line, parse_log, serialize
from git_gasp.protocol.fold import FoldError, fold
from git_gasp.protocol.identity import identity_hash, normalize_declared
from git_gasp.protocol.jsonstrict import json_equal
from git_gasp.protocol.manifest import ManifestError, parse_manifest
from git_gasp.protocol.ops import OpError, parse_ops
from git_gasp.protocol.snapshot import integrity_for, verify_integrity
from git_gasp.protocol.vocab import PackError, Vocabulary, parse_pack
from tests.testing.events import create, line, ops, relate, update
from tests.testing.paths import FIXTURE

FIXTURE_LOG = (FIXTURE / "state" / "events.jsonl").read_bytes()


def test_canonical_bytes_match_reference_shape():
    raw = (b'{"id":"e1","schema_version":1,"ts_ms":5,"actor":{"kind":"agent","id":"a"},'
           b'"kind":"goal.created","payload":{"a":1,"b":{"c":"\xc3\xa9","d":[1.5,null]}},'
           b'"causation_id":null,"correlation_id":"g"}')
    assert serialize(parse_line(raw)) == raw + b"\n"


def test_serialize_sorts_payload_keys_and_writes_raw_utf8():
    ev = parse_line(line("e1", "k", {"z": 1, "a": {"y": "é", "b": 2}}).rstrip(b"\n"))
    out = serialize(ev)
    assert b'"payload":{"a":{"b":2,"y":"\xc3\xa9"},"z":1}' in out
    assert out.endswith(b"\n") and out.count(b"\n") == 1


def test_fixture_lines_parse_and_round_trip_structurally():
    parsed = parse_log(FIXTURE_LOG)
    assert parsed.errors == [] and len(parsed.events) == 10
    for ev in parsed.events:
        again = parse_line(serialize(ev)[:-1])
        assert json_equal(again.to_dict(), ev.to_dict())


@pytest.mark.parametrize(
    "raw, reason",
    [
        (b'{"id":"e","schema_version":1,"ts_ms":1,"actor":{"kind":"a","id":"b"},"kind":"k",'
         b'"payload":{},"causation_id":null}', "missing field correlation_id"),
        (b'{"id":"e","schema_version":1,"ts_ms":1,"actor":{"kind":"a","id":"b"},"kind":"k",'
         b'"payload":{},"causation_id":null,"correlation_id":null,"extra":1}', "unknown field"),
        (b'{"id":"e","schema_version":"1","ts_ms":1,"actor":{"kind":"a","id":"b"},"kind":"k",'
         b'"payload":{},"causation_id":null,"correlation_id":null}', "schema_version"),
        (b'{"id":"e","schema_version":1,"ts_ms":1.5,"actor":{"kind":"a","id":"b"},"kind":"k",'
         b'"payload":{},"causation_id":null,"correlation_id":null}', "ts_ms"),
        (b'{"id":"e","schema_version":1,"ts_ms":1,"actor":{"kind":"a"},"kind":"k",'
         b'"payload":{},"causation_id":null,"correlation_id":null}', "actor"),
        (b'{"id":"e","schema_version":1,"ts_ms":1,"actor":{"kind":"a","id":"b"},"kind":"k",'
         b'"payload":{},"causation_id":7,"correlation_id":null}', "causation_id"),
        (b'{"id":"e","id":"f","schema_version":1,"ts_ms":1,"actor":{"kind":"a","id":"b"},'
         b'"kind":"k","payload":{},"causation_id":null,"correlation_id":null}', "duplicate key"),
        (b'{"id":"e","schema_version":1,"ts_ms":1,"actor":{"kind":"a","id":"b"},"kind":"k",'
         b'"payload":{"x":{"y":1,"y":2}},"causation_id":null,"correlation_id":null}',
         "duplicate key"),
        (b'{"id":"e","schema_version":true,"ts_ms":1,"actor":{"kind":"a","id":"b"},"kind":"k",'
         b'"payload":{},"causation_id":null,"correlation_id":null}', "schema_version"),
        (b'{"id":"e","schema_version":1,"ts_ms":99999999999999999999,"actor":{"kind":"a",'
         b'"id":"b"},"kind":"k","payload":{},"causation_id":null,"correlation_id":null}',
         "64 bits"),
        (b"[1,2]", "expected a JSON object"),
        (b"", "blank line"),
    ],
)
def test_strict_envelope_rejects(raw, reason):
    with pytest.raises(EnvelopeError, match=reason):
        parse_line(raw)


def test_parse_log_reports_line_numbers_and_torn_tail():
    good = line("e1", "run.started", {})
    parsed = parse_log(good + b"not json\n" + good.rstrip(b"\n").replace(b"e1", b"e2"))
    assert [e.line for e in parsed.errors] == [2, 3]
    assert "no terminating newline" in parsed.errors[1].message
    assert [e.id for e in parsed.events] == ["e1", "e2"]


def test_ops_shape_is_validated():
    assert parse_ops([create("n", "goal")])[0][0] == "CreateNode"
    with pytest.raises(OpError, match="op #1: unknown op 'Frobnicate'"):
        parse_ops([{"Frobnicate": {}}])
    with pytest.raises(OpError, match="missing props"):
        parse_ops([{"CreateNode": {"id": "n", "kind": "goal"}}])
    with pytest.raises(OpError, match="array"):
        parse_ops({"CreateNode": {}})
    with pytest.raises(OpError, match="hash must be a string or null"):
        parse_ops([{"AttachArtifact": {"id": "n", "artifact": {
            "kind": "commit", "uri": "git:abc", "hash": 5, "summary": None, "metadata": {}}}}])


def _events(*lines: bytes):
    parsed = parse_log(b"".join(lines))
    assert not parsed.errors
    return parsed.events


def test_fold_semantics():
    art = {"kind": "commit", "uri": "git:abc", "hash": None, "summary": None, "metadata": {}}
    evs = _events(
        ops("o1", None, create("a", "goal", title="t", meta={"x": 1, "y": 2}),
            create("b", "patch"), relate("b", "advances", "a"), relate("b", "advances", "a")),
        ops("o2", None, update("a", meta={"y": 3, "z": 4}, title="u"),
            {"TombstoneNode": {"id": "b", "reason": "gone"}},
            {"MarkStale": {"id": "a", "reason": "old"}},
            {"AttachArtifact": {"id": "a", "artifact": art}},
            {"DeleteRelation": {"from": "b", "rel": "advances", "to": "a"}}),
    )
    before = [e.to_dict() for e in evs]
    result = fold(evs)
    g = result.graph
    assert g.nodes["a"]["props"] == {"title": "u", "meta": {"x": 1, "y": 3, "z": 4},
                                     "stale_reason": "old"}
    assert g.nodes["a"]["stale"] and g.nodes["a"]["artifacts"] == [art]
    assert g.nodes["b"]["tombstoned"] and g.nodes["b"]["props"]["tombstone_reason"] == "gone"
    assert g.relations == [] and g.version == 9 and result.skipped == []
    assert [e.to_dict() for e in evs] == before, "fold must not mutate events"


def test_lenient_fold_skips_dangling_op_with_event_and_line_strict_fails():
    evs = _events(ops("o1", None, create("a", "goal")), ops("o2", None, update("zz", x=1)))
    result = fold(evs)
    assert result.graph.version == 1
    (skip,) = result.skipped
    assert (skip.event_id, skip.line, skip.index) == ("o2", 2, 1)
    assert "'zz'" in skip.describe() and "line 2" in skip.describe()
    with pytest.raises(FoldError, match="o2"):
        fold(evs, strict=True)


def test_fixture_fold_reproduces_the_four_facts():
    from git_gasp.conformance.checks import fixture_facts

    graph = fold(parse_log(FIXTURE_LOG).events).graph
    assert fixture_facts(graph) == []
    graph.nodes["patch_9"]["props"] = {**graph.nodes["patch_9"]["props"], "status": "Proposed"}
    assert len(fixture_facts(graph)) == 1


def test_identity_hash_matches_the_spec_shell_recipe(tmp_path):
    ident = tmp_path / "identity"
    (ident / "sub").mkdir(parents=True)
    files = {"IDENTITY.md": b"who\n", "PERSONALITY.md": b"calm", "sub/x.md": b"\xff\x00"}
    for name, data in files.items():
        (ident / name).write_bytes(data)
    recipe = subprocess.run(
        "find identity -type f | LC_ALL=C sort | while IFS= read -r f; do printf '%s\\n' "
        "\"$f\"; cat \"$f\"; done | sha256sum", shell=True, cwd=tmp_path, capture_output=True,
        check=True).stdout.split()[0].decode()
    ours = identity_hash((f"identity/{n}".encode(), d) for n, d in files.items())
    assert ours == recipe
    assert normalize_declared("sha256:" + recipe.upper()) == recipe
    assert normalize_declared("nope") is None


def test_manifest_front_matter_and_fenced_block():
    front = parse_manifest(b"---\nspec_version: 1\nagent_id: a\nidentity_hash: x\n---\n# A\n")
    assert front.agent_id == "a" and front.identity_hash == "x"
    fenced = parse_manifest(b"# A\n\n```yaml\nspec_version: 1\nagent_id: b\n"
                            b"locations:\n  log: logs/events.jsonl\n```\n")
    assert fenced.agent_id == "b" and fenced.locations["log"] == "logs/events.jsonl"
    table = parse_manifest(b"```yaml\nspec_version: 1\nagent_id: c\n```\n\n## Locations\n\n"
                           b"| what | where |\n|---|---|\n| identity | `soul/` |\n")
    assert table.locations["identity"] == "soul"
    for bad, why in [(b"# no yaml\n", "no YAML"), (b"---\nspec_version: 1\n---\n", "agent_id"),
                     (b"```yaml\n: : :\n```\n", "does not parse"),
                     (b"```yaml\nspec_version: 1\nagent_id: a\nlocations:\n  log: ../x\n```\n",
                      "inside the repo")]:
        with pytest.raises(ManifestError, match=why):
            parse_manifest(bad)


def test_packs_extend_vocabulary_and_bad_packs_are_errors():
    pack = parse_pack({"id": "p", "name": "p", "version": "1",
                       "object_types": {"widget": {"kind": "widget", "required_props": ["size"],
                                                   "description": ""}},
                       "relation_types": {"wraps": {"rel": "wraps", "from_kinds": [],
                                                    "to_kinds": [], "description": ""}},
                       "policies": [], "prompts": [], "settings": {}}, "p")
    vocab = Vocabulary.with_packs([pack])
    assert {"widget", "goal"} <= vocab.node_kinds and "wraps" in vocab.relations
    assert vocab.required_props["widget"] == ["size"]
    with pytest.raises(PackError):
        parse_pack({"object_types": []}, "p")
    with pytest.raises(PackError, match="required_props"):
        parse_pack({"object_types": {"w": {"required_props": "size"}}}, "p")


def test_snapshot_integrity_over_raw_prefix():
    rec = integrity_for(FIXTURE_LOG, 5, "event_05")
    first5 = b"".join(FIXTURE_LOG.splitlines(keepends=True)[:5])
    assert rec.sha256 == hashlib.sha256(first5).hexdigest()
    assert verify_integrity(FIXTURE_LOG, rec, "event_05") is None
    assert "event_04" in verify_integrity(FIXTURE_LOG, rec, "event_04")
    tampered = FIXTURE_LOG.replace(b"Make retry reliable", b"Make retry reliablE")
    assert "does not match" in verify_integrity(tampered, rec, "event_05")
    assert "shorter" in verify_integrity(FIXTURE_LOG[:100], rec, "event_05")
