"""`kg search` and the index behind it: ranking, regex, filters, hops, freshness."""

from __future__ import annotations

import pytest

from tests.kg.helpers import kg, kg_json
from tests.testing.run import git, out

pytestmark = pytest.mark.slow  # the CLI per query

DOC = """
date: 2026-03-01
entities:
  - {id: rust, label: Rust, type: technology, aliases: [rust-lang],
     body: "Memory safety without GC."}
  - {id: ownership, label: Ownership, type: concept, body: "Rust's core idea: one owner."}
  - {id: borrow-checker, label: Borrow Checker, type: technology, body: "Enforces ownership."}
  - {id: gc, label: Garbage Collection, type: concept, body: "Tracing or refcounting."}
relations:
  - {from: rust, type: depends-on, to: ownership, body: "Ownership makes Rust safe."}
  - {from: ownership, type: enables, to: borrow-checker, body: "Checked at compile time."}
  - {from: rust, type: contradicts, to: gc, body: "No runtime collector."}
"""


@pytest.fixture
def rust(graph):
    cwd, wt = graph
    kg(cwd, "save", "-", "--session-id", "s1", input=DOC)
    later = """
date: 2026-05-01
entities:
  - {id: gc, body: "Go and Java use it."}
relations:
  - {from: rust, type: contradicts, to: gc, action: supersede}
"""
    kg(cwd, "save", "-", "--session-id", "s1", input=later)
    return cwd, wt


def search(cwd, *args):
    return kg_json(cwd, "search", *args, "--session-id", "s1")


def test_exact_then_name_hits_then_bodies_then_relations(rust):
    cwd, _ = rust
    res = search(cwd, "rust")["results"]
    assert [(r["kind"], r.get("id") or r["from"], r["rank"]) for r in res] == [
        ("entity", "rust", 0),
        ("entity", "ownership", 2),
        ("relation", "rust", 3),
        ("relation", "rust", 3),
    ]
    alias = search(cwd, "RUST-LANG")["results"]
    assert alias[0]["id"] == "rust" and alias[0]["rank"] == 0


def test_regex_and_fixed_strings(rust):
    cwd, _ = rust
    res = search(cwd, "compile t[i]me|no runtime")["results"]
    # newest first: the supersede updated rust->gc later
    assert [(r["from"], r["to"]) for r in res] == [("rust", "gc"), ("ownership", "borrow-checker")]
    hits = search(cwd, "own(er|ership)")["results"]
    assert {r.get("id") for r in hits if r["kind"] == "entity"} >= {"ownership", "borrow-checker"}
    assert search(cwd, "safe[ty")["results"] == []  # not a valid regex: plain text, no crash
    assert search(cwd, "-F", "t[i]me")["results"] == []


def test_filters_type_rel_valid_since(rust):
    cwd, _ = rust
    ents = search(cwd, "o", "--type", "concept")["results"]
    assert ents and all(r["kind"] == "entity" and r["type"] == "concept" for r in ents)
    rels = [r for r in search(cwd, "o", "--rel", "enables")["results"] if r["kind"] == "relation"]
    assert [(r["from"], r["to"]) for r in rels] == [("ownership", "borrow-checker")]
    assert any(r["kind"] == "relation" and r["to"] == "gc" for r in search(cwd, "collector")[
        "results"])
    assert search(cwd, "collector", "--valid-only")["results"] == []
    recent = search(cwd, "o", "--since", "2026-04-01")["results"]
    assert {(r.get("id") or r["to"]) for r in recent} == {"gc"}


def test_hops_and_reverse(rust):
    cwd, _ = rust
    res = search(cwd, "Rust", "--limit", "1", "--hop", "2")
    assert res["more"] is True
    hop1 = {(e["from"], e["type"], e["to"]) for e in res["hops"][0]["edges"]}
    assert hop1 == {("rust", "depends-on", "ownership"), ("rust", "contradicts", "gc")}
    assert res["hops"][1]["edges"] == [
        {"from": "ownership", "type": "enables", "to": "borrow-checker"}]
    valid = search(cwd, "Rust", "--limit", "1", "--hop", "1", "--valid-only")
    assert {e["to"] for e in valid["hops"][0]["edges"]} == {"ownership"}
    only = search(cwd, "Rust", "--limit", "1", "--hop", "2", "--rel", "depends-on")
    assert [len(h["edges"]) for h in only["hops"]] == [1, 0]
    rev = search(cwd, "--reverse", "ownership")["reverse"]
    assert [(r["from"], r["type"]) for r in rev] == [("rust", "depends-on")]
    assert search(cwd, "--reverse", "gc", "--valid-only")["reverse"] == []
    text = out(kg(cwd, "search", "--reverse", "ownership", "--hop", "1", "--session-id", "s1"))
    assert "rust --depends-on--> ownership" in text
    assert "ownership --enables--> borrow-checker" in text


def test_index_follows_commits_and_uncommitted_edits_on_request(rust):
    cwd, wt = rust
    assert search(cwd, "zebra")["results"] == []
    # an uncommitted hand edit is not part of the graph yet, unless asked for
    f = wt / "entities/gc/entity.md"
    f.write_text(f.read_text() + "\nZebra stripes.\n")
    assert search(cwd, "zebra")["results"] == []
    assert [r["id"] for r in search(cwd, "zebra", "--uncommitted")["results"]] == ["gc"]
    # a new entity directory by hand (untracked), then reverted
    (wt / "entities/new-one").mkdir()
    (wt / "entities/new-one/entity.md").write_text("---\nid: new-one\nlabel: Zebra Two\n---\n")
    got = {r["id"] for r in search(cwd, "zebra", "--uncommitted")["results"]}
    assert got == {"gc", "new-one"}
    assert kg_json(cwd, "info", "--uncommitted", "--session-id", "s1")["entities"] == 5
    git(wt, "checkout", "--", ".")
    git(wt, "clean", "-fdq")
    assert search(cwd, "zebra", "--uncommitted")["results"] == []
    # a commit made by someone else (plain git) is picked up through the tree diff
    (wt / "entities/rust/entity.md").write_text(
        (wt / "entities/rust/entity.md").read_text().replace("Memory safety", "Fearless zebra"))
    git(wt, "commit", "-qam", "hand commit")
    assert [r["id"] for r in search(cwd, "zebra")["results"]] == ["rust"]
    git(wt, "rm", "-rq", "entities/gc")
    git(wt, "commit", "-qm", "remove gc")
    assert kg_json(cwd, "info", "--session-id", "s1")["entities"] == 3
    assert search(cwd, "garbage")["results"] == []
    # packed refs (after gc) still resolve without running git
    git(wt, "pack-refs", "--all")
    assert [r["id"] for r in search(cwd, "zebra")["results"]] == ["rust"]


def test_a_broken_cache_is_rebuilt(rust):
    cwd, wt = rust
    search(cwd, "rust")
    idx = git(wt, "rev-parse", "--git-dir").strip()
    from pathlib import Path

    cache = Path(idx if Path(idx).is_absolute() else wt / idx) / "perstate-index"
    for name in ("index.bin", "records.bin"):
        (cache / name).write_bytes(b"garbage")
    assert search(cwd, "rust")["results"][0]["id"] == "rust"


def test_text_output_and_errors(rust):
    cwd, _ = rust
    text = out(kg(cwd, "search", "ownership", "--session-id", "s1"))
    assert "entity    ownership — Ownership [concept]" in text
    assert "relation  rust --depends-on--> ownership" in text
    proc = kg(cwd, "search", "--session-id", "s1", ok=False)
    assert proc.returncode == 2 and "QUERY" in out(proc)
    proc = kg(cwd, "search", "x", "--since", "yesterday", "--session-id", "s1", ok=False)
    assert proc.returncode == 2
    assert "no match" in out(kg(cwd, "search", "qqqzzz", "--session-id", "s1"))
