"""`kg init`, `kg status`, `kg save`: real git, a bare remote, a private state home."""

from __future__ import annotations

import json

import pytest

from tests.kg.helpers import kg, kg_json
from tests.testing.run import git, out

pytestmark = pytest.mark.slow  # real git and a bare remote per test

FIRST = """
summary: first insights
date: 2026-07-14
entities:
  - label: LLM Evaluation
    type: domain
    aliases: [model benchmarking]
    sources: ["arxiv:2505.20416"]
    body: LLM evaluation is the systematic measurement of LLM capabilities.
  - id: harness
    label: Harness
    type: technology
    body: The test harness.
relations:
  - {from: llm-evaluation, type: depends-on, to: Harness, body: Evaluation needs a harness.}
"""


def remote_log(remote, branch="main"):
    return git(remote, "log", "--format=%s", branch).splitlines()


def remote_file(remote, path, branch="main"):
    return git(remote, "show", f"{branch}:{path}")


def test_status_before_init_has_no_side_effects(tmp_path, home):
    proc = kg(tmp_path, "--session-id", "s1")
    assert "not initialised" in out(proc) and "kg init" in out(proc)
    assert not home.exists()
    st = kg_json(tmp_path, "status", "--session-id", "s1")
    assert st["configured"] is False and st["bound_branch"] is None


def test_init_clones_creates_structure_commits_and_pushes(tmp_path, home, remote):
    proc = kg(tmp_path, "init", "--repo", str(remote), "--branch", "main", "--yes",
              "--session-id", "s1")
    assert "not an SSH remote" in out(proc)
    assert (home / "memory.git" / "HEAD").is_file()
    wt = home / "worktrees" / "memory" / "main"
    assert (wt / ".git").is_file() and (wt / "entities").is_dir()
    assert "## Relation Types" in remote_file(remote, "schema/ontology.md")
    assert remote_log(remote) == ["perstate: initialize knowledge graph"]  # one commit
    cfg = (home / "config.yml").read_text()
    assert f"default_repo: {remote}\n" in cfg and "  s1:\n    branch: main\n" in cfg
    st = kg_json(tmp_path, "status", "--session-id", "s1")
    assert st["configured"] and st["bound_branch"] == "main" and st["worktree"] == str(wt)
    # idempotent: a second init reuses everything and commits nothing
    before = remote_log(remote)
    kg(tmp_path, "init", "--yes")
    assert remote_log(remote) == before


def test_init_of_a_second_branch_starts_from_the_default_branch(graph, remote, home):
    cwd, _ = graph
    kg(cwd, "save", "-", "--session-id", "s1", input=FIRST)
    kg(cwd, "init", "--branch", "agent-a", "--yes", "--session-id", "s2")
    assert git(remote, "rev-parse", "agent-a") == git(remote, "rev-parse", "main")
    assert (home / "worktrees/memory/agent-a/entities/harness/entity.md").is_file()
    assert "default_branch: agent-a\n" in (home / "config.yml").read_text()


def test_init_on_a_local_path_that_is_not_a_repo_initialises_it(tmp_path, home):
    target = tmp_path / "plain-dir"
    kg(tmp_path, "init", "--repo", str(target), "--yes", "--session-id", "s1")
    assert (target / ".git").is_dir()
    assert "schema/ontology.md" in git(target, "ls-files")  # pushed via updateInstead


def test_init_without_yes_and_no_tty_refuses(tmp_path, home, remote):
    proc = kg(tmp_path, "init", "--repo", str(remote), ok=False)
    assert proc.returncode == 2 and "--yes" in out(proc)
    assert not (home / "config.yml").exists()


def test_save_creates_entities_and_relations_commits_and_pushes(graph, remote):
    cwd, wt = graph
    res = kg_json(cwd, "save", "-", "--session-id", "s1", input=FIRST)
    assert res["pushed"] and res["counts"] == {"created": 2, "related": 1}
    assert remote_log(remote)[0] == "perstate: first insights"
    ent = remote_file(remote, "entities/llm-evaluation/entity.md")
    assert ent.startswith("---\nid: llm-evaluation\nlabel: LLM Evaluation\ntype: domain\n")
    rel = remote_file(remote, "entities/llm-evaluation/depends-on/harness.md")
    assert "from: llm-evaluation\nto: harness\ntype: depends-on\n" in rel
    assert "valid_until: null\n" in rel and "Evaluation needs a harness." in rel
    assert git(wt, "status", "--porcelain") == ""


def test_save_merges_by_alias_and_is_idempotent(graph, remote):
    cwd, wt = graph
    kg(cwd, "save", "-", "--session-id", "s1", input=FIRST)
    doc = """
date: 2026-07-20
entities:
  - label: Model Benchmarking
    aliases: [evals]
    sources: ["arxiv:2505.20416", "github:user/repo"]
    body: Benchmarks saturate quickly.
"""
    res = kg_json(cwd, "save", "-", "--session-id", "s1", input=doc)
    assert res["counts"] == {"merged": 1}
    text = (wt / "entities/llm-evaluation/entity.md").read_text()
    assert "aliases: [model benchmarking, evals]\n" in text
    assert "created_at: 2026-07-14\nupdated_at: 2026-07-20\n" in text
    assert 'sources: ["arxiv:2505.20416", "github:user/repo"]\n' in text
    assert "### 2026-07-20\n\nBenchmarks saturate quickly.\n\n## Sources" in text
    assert text.rstrip().endswith("- github:user/repo")
    assert remote_log(remote)[0] == "perstate: merge 1 item"
    before = git(remote, "rev-parse", "main")
    again = kg(cwd, "save", "-", "--session-id", "s1", input=doc)
    assert "nothing to save" in out(again)
    assert git(remote, "rev-parse", "main") == before


def test_several_dedupe_matches_are_refused_and_listed(graph, remote):
    cwd, wt = graph
    kg(cwd, "save", "-", "--session-id", "s1", input=FIRST)
    before = git(remote, "rev-parse", "main")
    doc = "entities:\n  - {label: Harness, aliases: [LLM Evaluation], body: x}\n"
    proc = kg(cwd, "save", "-", "--session-id", "s1", input=doc, ok=False)
    assert proc.returncode == 1
    assert "matches several entities: harness, llm-evaluation" in out(proc)
    assert "Traceback" not in out(proc)
    assert git(remote, "rev-parse", "main") == before
    assert git(wt, "status", "--porcelain") == ""


def test_supersede_and_delete(graph, remote):
    cwd, wt = graph
    kg(cwd, "save", "-", "--session-id", "s1", input=FIRST)
    doc = """
date: 2026-08-01
relations:
  - {from: llm-evaluation, type: depends-on, to: harness, action: supersede}
"""
    kg(cwd, "save", "-", "--session-id", "s1", input=doc)
    rel = remote_file(remote, "entities/llm-evaluation/depends-on/harness.md")
    assert "updated_at: 2026-08-01\nvalid_until: 2026-08-01\n" in rel
    info = kg_json(cwd, "info", "--session-id", "s1")
    assert info["relations"] == {"total": 1, "valid": 0, "superseded": 1, "undeclared": 0}
    kg(cwd, "save", "-", "--session-id", "s1",
       input="entities:\n  - {id: harness, action: delete}\n")
    files = git(remote, "ls-tree", "-r", "--name-only", "main").split()
    assert "entities/harness/entity.md" not in files
    assert not any("depends-on/harness.md" in f for f in files)  # incoming relation removed
    assert not (wt / "entities/llm-evaluation/depends-on").exists()  # empty dir cleaned
    assert "entities/llm-evaluation/entity.md" in files


def test_supersede_entity_marks_its_relations(graph):
    cwd, wt = graph
    kg(cwd, "save", "-", "--session-id", "s1", input=FIRST)
    kg(cwd, "save", "-", "--session-id", "s1",
       input="date: 2026-09-09\nentities:\n  - {id: harness, action: supersede}\n")
    assert "valid_until: 2026-09-09" in (wt / "entities/harness/entity.md").read_text()
    rel = (wt / "entities/llm-evaluation/depends-on/harness.md").read_text()
    assert "valid_until: 2026-09-09" in rel
    hits = kg_json(cwd, "search", "harness", "--valid-only", "--session-id", "s1")["results"]
    assert hits == []


def test_invalid_document_writes_nothing(graph, remote):
    cwd, wt = graph
    before = git(remote, "rev-parse", "main")
    bad_docs = [
        "entities:\n  - {id: ../escape, type: concept}\n",
        "entities:\n  - {id: good-one, type: concept}\n  - {id: .hidden, type: concept}\n",
        "entities:\n  - {id: ok-one, type: concept}\n"
        "relations:\n  - {from: ok-one, type: x, to: nowhere}\n",
        "entities:\n  - {id: ok-two, type: concept}\n"
        "relations:\n  - {from: ok-two, type: Bad/Type, to: ok-two}\n",
        "entities:\n  - {id: no-type}\n",
        "entities:\n  - {id: a-b, type: concept, lable: typo}\n",
        "not: [a, document\n",
        "[]",
    ]
    for doc in bad_docs:
        proc = kg(cwd, "save", "-", "--session-id", "s1", input=doc, ok=False)
        assert proc.returncode in (1, 2), doc
        assert out(proc).startswith("git gasp: error:"), out(proc)
        assert git(wt, "status", "--porcelain", "--untracked-files=all") == "", doc
    assert git(remote, "rev-parse", "main") == before


def test_push_failure_rolls_back_the_local_commit(graph, remote):
    cwd, wt = graph
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'refusing everything' >&2\nexit 1\n")
    hook.chmod(0o755)
    head = git(wt, "rev-parse", "HEAD")
    proc = kg(cwd, "save", "-", "--session-id", "s1", input=FIRST, ok=False)
    assert proc.returncode == 1 and "nothing saved" in out(proc)
    assert git(wt, "rev-parse", "HEAD") == head
    assert git(wt, "status", "--porcelain", "--untracked-files=all") == ""
    assert not (wt / "entities" / "harness").exists()
    hook.unlink()
    kg(cwd, "save", "-", "--session-id", "s1", input=FIRST)
    assert remote_log(remote)[0] == "perstate: first insights"


def test_uncommitted_edits_in_files_the_save_touches_are_refused(graph, remote):
    cwd, wt = graph
    kg(cwd, "save", "-", "--session-id", "s1", input=FIRST)
    ent = wt / "entities" / "harness" / "entity.md"
    ent.write_text(ent.read_text() + "\nhand edit\n")
    before = git(remote, "rev-parse", "main")
    proc = kg(cwd, "save", "-", "--session-id", "s1", ok=False,
              input="entities:\n  - {id: harness, body: merged}\n")
    assert "uncommitted edits" in out(proc) and "entities/harness/entity.md" in out(proc)
    assert ent.read_text().endswith("hand edit\n")  # not thrown away
    assert git(remote, "rev-parse", "main") == before


def test_unrelated_local_edits_survive_a_save_and_its_rollback(graph, remote):
    cwd, wt = graph
    kg(cwd, "save", "-", "--session-id", "s1", input=FIRST)
    (wt / "entities" / "stray").mkdir()
    (wt / "entities" / "stray" / "entity.md").write_text("---\nid: stray\n---\n")
    readme = wt / "README.md"
    readme.write_text(readme.read_text() + "local note\n")
    kg(cwd, "save", "-", "--session-id", "s1", input="entities:\n  - {id: harness, body: m}\n")
    files = git(remote, "ls-tree", "-r", "--name-only", "main")
    assert "entities/stray/entity.md" not in files  # only the save's own paths are committed
    assert "local note" not in git(remote, "show", "main:README.md")
    assert (wt / "entities/stray/entity.md").exists() and "local note" in readme.read_text()
    # a failing push rolls back the save but keeps the unrelated edits
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\nexit 1\n")
    hook.chmod(0o755)
    head = git(wt, "rev-parse", "HEAD")
    proc = kg(cwd, "save", "-", "--session-id", "s1", ok=False,
              input="entities:\n  - {id: new-one, type: concept}\n  - {id: harness, body: z}\n")
    assert "nothing saved" in out(proc)
    assert git(wt, "rev-parse", "HEAD") == head
    assert not (wt / "entities/new-one").exists()
    assert "z" not in (wt / "entities/harness/entity.md").read_text().split("### ")[-1]
    assert (wt / "entities/stray/entity.md").exists() and "local note" in readme.read_text()
    status = git(wt, "status", "--porcelain", "--untracked-files=all")
    assert sorted(status.splitlines()) == [" M README.md", "?? entities/stray/entity.md"]


def test_unbound_session_and_missing_session(graph):
    cwd, _ = graph
    proc = kg(cwd, "save", "-", "--session-id", "other", input=FIRST, ok=False)
    assert "not bound" in out(proc) and "kg switch main --session-id other" in out(proc)
    proc = kg(cwd, "save", "-", input=FIRST, ok=False)
    assert proc.returncode == 2 and "--session-id" in out(proc)


def test_json_document_and_custom_fields(graph, remote):
    cwd, wt = graph
    doc = {"entities": [{"id": "rust", "label": "Rust", "type": "technology",
                         "fields": {"confidence": "high", "tags": ["lang", "systems"]}}]}
    kg(cwd, "save", "-", "--session-id", "s1", input=json.dumps(doc))
    text = remote_file(remote, "entities/rust/entity.md")
    assert "confidence: high\ntags: [lang, systems]\n" in text


def test_save_from_a_file_and_dry_run(graph, remote, tmp_path):
    cwd, wt = graph
    f = tmp_path / "doc.yml"
    f.write_text(FIRST)
    before = git(remote, "rev-parse", "main")
    res = kg_json(cwd, "save", str(f), "--dry-run", "--session-id", "s1")
    assert res["dry_run"] and "entities/harness/entity.md" in res["files"]
    assert git(remote, "rev-parse", "main") == before and not (wt / "entities/harness").exists()
    kg(cwd, "save", str(f), "--session-id", "s1")
    assert git(remote, "rev-parse", "main") != before


def test_a_big_document_dedupes_like_a_small_one(graph, remote):
    cwd, wt = graph
    kg(cwd, "save", "-", "--session-id", "s1", input=FIRST)
    items = [f"  - {{id: bulk-{i}, type: concept, label: Bulk {i}}}" for i in range(40)]
    items.append("  - {label: '  model   BENCHMARKING ', body: via the name map}")
    items.append("  - {label: Harness, aliases: [LLM Evaluation]}")
    doc = "entities:\n" + "\n".join(items) + "\n"
    proc = kg(cwd, "save", "-", "--session-id", "s1", input=doc, ok=False)
    assert "matches several entities: harness, llm-evaluation" in out(proc)
    res = kg_json(cwd, "save", "-", "--session-id", "s1", input="\n".join(doc.splitlines()[:-1]))
    assert res["counts"] == {"created": 40, "merged": 1}
    assert "via the name map" in (wt / "entities/llm-evaluation/entity.md").read_text()
