"""A graph written by hand in Perstate's format works here, and ours reads like theirs."""

from __future__ import annotations

import subprocess

import pytest

from tests.kg.helpers import kg, kg_json
from tests.testing.run import git

pytestmark = pytest.mark.slow  # keeps the fast loop under a minute

HAND = {
    "schema/ontology.md": "# Ontology\n\n## Entity Types\n\n| Type | Description |\n",
    "README.md": "# Perstate Knowledge Graph\n",
    "entities/llm-evaluation/entity.md": """---
id: llm-evaluation
label: LLM Evaluation
type: domain
aliases: [LLM evaluation, model benchmarking]
created_at: 2026-07-14
updated_at: 2026-07-15
sources: ["arxiv:2505.20416", "github:user/repo"]
# hand-written comment
reviewer: {name: Ada, when: 2026-07-16}
tags:
  - evals
  - measurement
---

## Overview

LLM evaluation is the systematic measurement of LLM capabilities...

## Key Insights

(Knowledge about this entity itself, not about specific relations)

## Sources

- arxiv:2505.20416 — paper PDF (§4 Method, §5.3 Scaling)
- github:user/repo — README + source code (background_review.py#L1-L25)
""",
    "entities/harness/entity.md": """---
id: harness
label: Harness
type: technology
aliases: []
created_at: 2026-07-14
updated_at: 2026-07-14
sources: []
---

## Overview

Evaluation harnesses.
""",
    "entities/benchmarks/entity.md": """---
id: benchmarks
label: Benchmarks
type: concept
aliases: [benchmark suites]
created_at: 2026-07-10
updated_at: 2026-07-10
sources: []
---

Static benchmark suites.
""",
    "entities/llm-evaluation/depends-on/harness.md": """---
from: llm-evaluation
to: harness
type: depends-on
created_at: 2026-07-14
updated_at: 2026-07-15
valid_until: null
sources: ["arxiv:2505.20416 §4", "chat:2026-07-14"]
---

## Insight

LLM evaluation fundamentally depends on harness's engineering capabilities...
""",
    "entities/llm-evaluation/evolves-from/benchmarks.md": """---
from: llm-evaluation
to: benchmarks
type: evolves-from
created_at: 2026-07-01
updated_at: 2026-07-02
valid_until: 2026-07-02
sources: []
---

## Insight

Superseded view.
""",
    "entities/harness/part-of/llm-evaluation.md": """---
from: harness
to: llm-evaluation
type: part-of
created_at: 2026-07-14
updated_at: 2026-07-14
sources: []
---

No valid_until field at all (undeclared).
""",
}


@pytest.fixture
def hand_graph(tmp_path, home):
    src = tmp_path / "hand"
    for rel, text in HAND.items():
        p = src / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    git(src, "init", "-q", "-b", "main")
    git(src, "add", "-A")
    git(src, "commit", "-q", "-m", "hand-made")
    remote = tmp_path / "hand.git"
    git(tmp_path, "clone", "-q", "--bare", str(src), str(remote))
    kg(tmp_path, "init", "--repo", str(remote), "--yes", "--session-id", "s1")
    return tmp_path, home / "worktrees" / "hand" / "main", remote


def test_hand_made_graph_round_trips_through_info_search_save_view(hand_graph, tmp_path):
    cwd, wt, remote = hand_graph
    # init added nothing: the graph already had its structure
    assert git(remote, "log", "--format=%s", "main").splitlines() == ["hand-made"]

    info = kg_json(cwd, "info", "--session-id", "s1")
    assert info["entities"] == 3
    assert info["relations"] == {"total": 3, "valid": 1, "superseded": 1, "undeclared": 1}
    assert info["recent_commits"][0].endswith("hand-made")

    res = kg_json(cwd, "search", "model benchmarking", "--session-id", "s1")["results"]
    assert res[0]["id"] == "llm-evaluation" and res[0]["rank"] == 0
    res = kg_json(cwd, "search", "engineering capabilities", "--session-id", "s1")["results"]
    assert [(r["kind"], r["from"], r["to"]) for r in res] == [
        ("relation", "llm-evaluation", "harness")]
    rev = kg_json(cwd, "search", "--reverse", "llm-evaluation", "--session-id", "s1")
    assert [(r["from"], r["type"]) for r in rev["reverse"]] == [("harness", "part-of")]
    valid = kg_json(cwd, "search", "benchmark", "--valid-only", "--session-id", "s1")["results"]
    assert all(r["kind"] == "entity" for r in valid)  # the superseded relation is filtered

    doc = """
date: 2026-08-01
entities:
  - {id: llm-evaluation, body: Harness quality bounds eval validity., sources: ["chat:x"]}
relations:
  - {from: harness, type: part-of, to: llm-evaluation, body: Also part of it.}
"""
    kg(cwd, "save", "-", "--session-id", "s1", input=doc)
    text = (wt / "entities/llm-evaluation/entity.md").read_text()
    original = HAND["entities/llm-evaluation/entity.md"]
    # every line of the original front matter except updated_at/sources is untouched
    for line in original.split("---\n")[1].splitlines():
        if not line.startswith(("updated_at", "sources")):
            assert line + "\n" in text, line
    assert "updated_at: 2026-08-01\n" in text
    assert 'sources: ["arxiv:2505.20416", "github:user/repo", "chat:x"]\n' in text
    assert "### 2026-08-01\n\nHarness quality bounds eval validity.\n\n## Sources\n" in text
    assert "(background_review.py#L1-L25)\n- chat:x\n" in text
    rel = (wt / "entities/harness/part-of/llm-evaluation.md").read_text()
    assert "updated_at: 2026-08-01\n" in rel and "\nvalid_until:" not in rel  # undeclared
    # files the save did not touch are byte-identical
    for rel_path in ("entities/harness/entity.md", "entities/benchmarks/entity.md",
                     "entities/llm-evaluation/evolves-from/benchmarks.md"):
        assert (wt / rel_path).read_text() == HAND[rel_path]

    html = tmp_path / "view.html"
    kg(cwd, "view", "--output", str(html), "--no-open", "--session-id", "s1")
    page = html.read_text()
    assert "llm-evaluation" in page and "Harness quality bounds eval validity." in page


def test_our_files_answer_perstates_shell_queries(hand_graph):
    """What Perstate's scripts run (ls/grep/find) sees what `kg save` wrote."""
    cwd, wt, _ = hand_graph
    doc = """
entities:
  - {id: new-thing, label: New Thing, type: concept, aliases: [novelty]}
relations:
  - {from: new-thing, type: enables, to: harness}
"""
    kg(cwd, "save", "-", "--session-id", "s1", input=doc)

    def sh(cmd):
        return subprocess.run(cmd, shell=True, cwd=wt, capture_output=True, text=True).stdout

    assert "new-thing" in sh("ls entities/").split()
    assert sh('grep -rl "label:.*New Thing" entities/').strip() == "entities/new-thing/entity.md"
    assert "entities/new-thing/entity.md" in sh('grep -rl "novelty" entities/*/entity.md')
    assert sh("ls entities/new-thing/enables/").strip() == "harness.md"
    assert "entities/new-thing/enables/harness.md" in sh('grep -rl "to: harness" entities/')
    assert "entities/new-thing/enables/harness.md" in sh(
        'grep -rl "valid_until: null" entities/new-thing/enables/')


def test_symlinks_in_a_graph_repo_never_leak_or_redirect_writes(tmp_path, home):
    secret = tmp_path / "secret.txt"
    secret.write_text("---\nid: leak\nlabel: TOPSECRET\n---\nTOPSECRET key material\n")
    outside = tmp_path / "outside-dir"
    outside.mkdir()
    (outside / "entity.md").write_text("---\nid: away\nlabel: Away\n---\nTOPSECRET too\n")
    src = tmp_path / "src"
    (src / "entities" / "ok").mkdir(parents=True)
    (src / "entities" / "ok" / "entity.md").write_text(
        "---\nid: ok\nlabel: Ok\ntype: concept\n---\nfine\n")
    (src / "entities" / "leak").mkdir()
    (src / "entities" / "leak" / "entity.md").symlink_to(secret)
    (src / "entities" / "away").symlink_to(outside)
    git(src, "init", "-q", "-b", "main")
    git(src, "add", "-A")
    git(src, "commit", "-q", "-m", "with symlinks")
    remote = tmp_path / "sym.git"
    git(tmp_path, "clone", "-q", "--bare", str(src), str(remote))
    kg(tmp_path, "init", "--repo", str(remote), "--yes", "--session-id", "s1")

    res = kg_json(tmp_path, "search", "TOPSECRET", "--session-id", "s1")["results"]
    assert all("TOPSECRET" not in (r["snippet"] or "") for r in res)
    assert kg_json(tmp_path, "info", "--session-id", "s1")["entities"] == 1
    page = tmp_path / "v.html"
    kg(tmp_path, "view", "-o", str(page), "--no-open", "--session-id", "s1")
    assert "TOPSECRET" not in page.read_text()
    proc = kg(tmp_path, "save", "-", "--session-id", "s1", ok=False,
              input="entities:\n  - {id: away, type: concept, body: overwrite}\n")
    assert proc.returncode == 1 and "symlink" in proc.stderr.decode()
    assert (outside / "entity.md").read_text().endswith("TOPSECRET too\n")
