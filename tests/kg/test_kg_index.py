"""The index cache in-process: base + delta, rebuilds, counts, overlays."""

from __future__ import annotations

from pathlib import Path

from git_gasp.kg import index
from git_gasp.kg.search import Filters, run
from tests.testing.run import git


def _ent(root: Path, eid: str, body: str) -> None:
    d = root / "entities" / eid
    d.mkdir(parents=True, exist_ok=True)
    fm = f"id: {eid}\nlabel: {eid.title()}\ntype: concept\n"
    (d / "entity.md").write_text(f"---\n{fm}---\n{body}\n")


def _rel(root: Path, src: str, rtype: str, dst: str, valid: str) -> None:
    d = root / "entities" / src / rtype
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{dst}.md").write_text(f"---\nfrom: {src}\nto: {dst}\ntype: {rtype}\n{valid}---\nwhy\n")


def _commit(root: Path, msg: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-qm", msg)


def _ids(root: Path, q: str, g=None) -> list[str]:
    res = run(root, q, idx=g or index.load(root), flt=Filters())
    return [h.get("id") or f"{h['from']}>{h['to']}" for h in res.hits]


def test_base_then_delta_then_rebuild(tmp_path, monkeypatch):
    root = tmp_path / "g"
    root.mkdir()
    git(root, "init", "-q")
    for e in ("alpha", "beta", "gamma"):
        _ent(root, e, f"{e} body")
    _rel(root, "alpha", "depends-on", "beta", "valid_until: null\n")
    _rel(root, "beta", "enables", "gamma", "valid_until: 2026-01-01\n")
    _rel(root, "gamma", "part-of", "alpha", "")
    _commit(root, "one")
    g = index.load(root)
    assert len(g.parts) == 1
    assert (g.n_entities, g.n_relations, g.valid, g.superseded, g.undeclared) == (3, 3, 1, 1, 1)

    _ent(root, "beta", "beta rewritten with kiwi")
    (root / "entities/gamma/part-of/alpha.md").unlink()
    _ent(root, "delta-one", "kiwi too")
    _commit(root, "two")
    g = index.load(root)
    assert len(g.parts) == 2 and (root / ".git/perstate-index/delta.bin").is_file()
    assert (g.n_entities, g.n_relations, g.undeclared) == (4, 2, 0)
    assert sorted(_ids(root, "kiwi", g)) == ["beta", "delta-one"]
    assert _ids(root, "beta body", g) == []  # the replaced version is skipped
    assert [g.doc(*k)[0] for k in g.incoming("alpha")] == []
    assert [g.doc(*k)[0] for k in g.named("beta")] == ["entities/beta/entity.md"]
    again = index.load(root)  # the delta file is reused
    assert len(again.parts) == 2 and again.n_entities == 4

    (root / ".git/perstate-index/delta.bin").write_bytes(b"junk")
    assert sorted(_ids(root, "kiwi")) == ["beta", "delta-one"]

    monkeypatch.setattr(index, "DELTA_MAX", 0)
    _ent(root, "epsilon", "kiwi three")
    _commit(root, "three")
    g = index.load(root)
    assert len(g.parts) == 1 and not (root / ".git/perstate-index/delta.bin").exists()
    assert sorted(_ids(root, "kiwi", g)) == ["beta", "delta-one", "epsilon"]


def test_uncommitted_overlay_and_unborn_head(tmp_path):
    root = tmp_path / "g"
    root.mkdir()
    git(root, "init", "-q")
    assert index.load(root).n_entities == 0  # no commit yet: an empty graph
    _ent(root, "alpha", "plain")
    _commit(root, "one")
    _ent(root, "alpha", "now with mango")
    _ent(root, "fresh", "mango fresh")
    assert _ids(root, "mango") == []
    g = index.load(root, uncommitted=True)
    assert sorted(_ids(root, "mango", g)) == ["alpha", "fresh"] and g.n_entities == 2
    (root / "entities/alpha/entity.md").unlink()
    g = index.load(root, uncommitted=True)
    assert _ids(root, "mango", g) == ["fresh"] and g.n_entities == 1


def test_a_large_delta_replaces_the_right_documents(tmp_path):
    root = tmp_path / "g"
    root.mkdir()
    git(root, "init", "-q")
    for i in range(50):
        _ent(root, f"n-{i}", "old text")
    _commit(root, "one")
    assert index.load(root).n_entities == 50
    for i in range(0, 50, 2):  # 25 rewritten, 10 new: more than the direct-search cutoff
        _ent(root, f"n-{i}", "new text")
    for i in range(50, 60):
        _ent(root, f"n-{i}", "new text")
    _commit(root, "two")
    g = index.load(root)
    assert len(g.parts) == 2 and g.n_entities == 60
    res = run(root, "old text", idx=g, flt=Filters(), limit=100)
    assert sorted(h["id"] for h in res.hits) == sorted(f"n-{i}" for i in range(1, 50, 2))
    res = run(root, "new text", idx=g, flt=Filters(), limit=100)
    assert len(res.hits) == 35


def test_a_linked_index_dir_is_not_written_through(tmp_path):
    root = tmp_path / "g"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    _ent(root, "alpha", "first")
    _commit(root, "one")
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / ".git" / "perstate-index").symlink_to(outside)
    assert _ids(root, "alpha") == ["alpha"]  # answered from memory
    assert list(outside.iterdir()) == []
