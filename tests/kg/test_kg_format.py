"""The Perstate file format: ids, front matter that keeps unknown fields, fast parser."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from git_gasp.base.errors import GaspError
from git_gasp.kg import frontmatter as fmm
from git_gasp.kg import ids, model

pytestmark = pytest.mark.slow  # keeps the fast loop under a minute

PERSTATE_ENTITY = """---
id: llm-evaluation
label: LLM Evaluation
type: domain
aliases: [LLM evaluation, model benchmarking]
created_at: 2026-07-14
updated_at: 2026-07-15
sources: ["arxiv:2505.20416", "github:user/repo"]
# a comment someone left
confidence: high
owner:
  name: Ada
  team: evals
---

## Overview

LLM evaluation is the systematic measurement of LLM capabilities...
"""


@pytest.mark.parametrize("good", ["llm-evaluation", "a", "gpt-4", "x1-y2-z3", "模型-评估"])
def test_new_ids_accept_kebab_case(good):
    assert ids.check_new_id(good) == good


@pytest.mark.parametrize(
    "bad",
    ["", "../etc", "a/b", "a\\b", ".hidden", "..", "Upper", "a_b", "a--b", "-a", "a-", "a b",
     "entity", "x" * 121, "a\nb", "a.b"],
)
def test_new_ids_reject_unsafe_or_non_kebab(bad):
    with pytest.raises(GaspError):
        ids.check_new_id(bad)


@pytest.mark.parametrize("bad", ["", ".", "..", ".git", "a/b", "a\\b", "a\0b", "tab\there"])
def test_existing_ids_must_be_one_safe_component(bad):
    with pytest.raises(GaspError):
        ids.check_existing_id(bad)
    assert ids.check_existing_id("Hand_Made Id") == "Hand_Made Id"


def test_slugify_gives_a_valid_id():
    assert ids.slugify("LLM Evaluation") == "llm-evaluation"
    assert ids.slugify("  C++ / Rust: a_b  ") == "c-rust-a-b"
    assert ids.is_kebab(ids.slugify("Entity"))


@given(st.text(min_size=1, max_size=60))
@settings(max_examples=200, deadline=None)
def test_slugify_never_produces_an_unsafe_id(text):
    slug = ids.slugify(text)
    assert slug == "" or ids.is_kebab(slug)


def test_front_matter_edit_keeps_unknown_fields_byte_for_byte():
    fm, body = fmm.parse_document(PERSTATE_ENTITY)
    assert fm.get("created_at") == "2026-07-14"  # dates stay strings
    assert fm.get("owner") == {"name": "Ada", "team": "evals"}
    fm.set("updated_at", "2026-08-01")
    fm.set("aliases", ["LLM evaluation", "model benchmarking", "evals, the field"])
    text = fmm.render_document(fm, body)
    kept = "# a comment someone left\nconfidence: high\nowner:\n  name: Ada\n  team: evals\n"
    assert kept in text
    assert "updated_at: 2026-08-01\n" in text
    assert 'aliases: [LLM evaluation, model benchmarking, "evals, the field"]\n' in text
    again, body2 = fmm.parse_document(text)
    assert again.get("aliases")[-1] == "evals, the field"
    assert body2 == body
    assert fmm.render_document(fmm.parse_document(PERSTATE_ENTITY)[0], body) == PERSTATE_ENTITY


@pytest.mark.parametrize(
    "value",
    ["plain", "yes", "null", "2026-07-14", "a: b", "#tag", "x #y", "", " pad", "multi\nline",
     "quote\"d", "[x]", "{y}", "- item", "123", "1.5", "true", "@at", "ünï", "tail:"],
)
def test_rendered_scalars_load_back_unchanged(value):
    assert fmm.load_yaml("k: " + fmm.render_scalar(value)) == {"k": value}
    assert fmm.load_yaml("k: " + fmm.render_list([value, "b"])) == {"k": [value, "b"]}


@given(st.lists(st.text(max_size=20), max_size=4), st.text(max_size=30))
@settings(max_examples=300, deadline=None)
def test_rendered_lists_and_scalars_load_back(items, scalar):
    text = f"aliases: {fmm.render_list(items)}\nlabel: {fmm.render_scalar(scalar)}\n"
    assert fmm.load_yaml(text) == {"aliases": items, "label": scalar}


def test_document_without_front_matter_is_all_body():
    fm, body = fmm.parse_document("# Just notes\n")
    assert fm.data == {} and body == "# Just notes\n"
    assert fmm.split("---\nno end\n") == (None, "---\nno end\n")


def test_invalid_front_matter_is_a_clear_error():
    with pytest.raises(GaspError, match="YAML does not parse"):
        fmm.parse_document("---\nkey: [unclosed\n---\nbody\n")


def test_new_entity_and_relation_follow_the_perstate_templates():
    ent = model.new_entity("llm-evaluation", "LLM Evaluation", "domain", ["model benchmarking"],
                           ["arxiv:2505.20416"], "2026-07-14", "Text.", {"confidence": "high"})
    assert ent.startswith(
        "---\nid: llm-evaluation\nlabel: LLM Evaluation\ntype: domain\n"
        "aliases: [model benchmarking]\ncreated_at: 2026-07-14\nupdated_at: 2026-07-14\n"
        'sources: ["arxiv:2505.20416"]\nconfidence: high\n---\n\n## Overview\n\nText.\n'
    )
    assert ent.endswith("## Sources\n\n- arxiv:2505.20416\n")
    rel = model.new_relation("a", "b", "depends-on", [], "2026-07-14", "Why.", {})
    assert rel == (
        "---\nfrom: a\nto: b\ntype: depends-on\ncreated_at: 2026-07-14\n"
        "updated_at: 2026-07-14\nvalid_until: null\nsources: []\n---\n\n## Insight\n\nWhy.\n"
    )


def test_merge_subsection_goes_before_a_trailing_sources_section():
    body = "\n## Overview\n\nA.\n\n## Sources\n\n- s1\n"
    got = model.append_subsection(body, "2026-07-15", "B.", ["s2"])
    assert got == "\n## Overview\n\nA.\n\n### 2026-07-15\n\nB.\n\n## Sources\n\n- s1\n- s2\n"
    plain = model.append_subsection("\nJust text.\n", "2026-07-15", "More.", [])
    assert plain == "\nJust text.\n\n### 2026-07-15\n\nMore.\n"


_text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40).filter(
    lambda t: t.strip() == t and t.strip())


@given(_text, st.lists(_text, max_size=3), st.lists(_text, max_size=3), st.text(max_size=200))
@settings(max_examples=200, deadline=None)
def test_any_label_alias_source_and_body_round_trip(label, aliases, sources, body):
    from git_gasp.kg.index import parse_file

    text = model.new_entity("x-1", label, "concept", aliases, sources, "2026-01-01", body, {})
    fm, got_body = fmm.parse_document(text)
    assert fm.get("label") == label
    assert fm.get("aliases") == aliases and fm.get("sources") == sources
    assert body.strip("\n") in got_body
    rec = parse_file("entities/x-1/entity.md", text.encode())
    assert rec[3] == label.replace("\t", " ").replace("\n", " ").replace("\r", " ") \
        .replace("\x1f", " ")
