"""kg on hostile input: YAML anchors/aliases in front matter are refused in one line
(an alias bomb never expands), and a file name that is not UTF-8 is reported and
skipped, not fatal to every kg command."""

from __future__ import annotations

import os

import pytest

from git_gasp.base.errors import GaspError
from git_gasp.kg.frontmatter import FrontMatter, load_yaml
from tests.kg.helpers import kg
from tests.testing.run import git, out

BOMB = "".join(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 40))
BOMB = "l0: &l0 [lol]\n" + BOMB


def test_alias_bomb_is_refused_before_it_expands():
    with pytest.raises(GaspError, match="anchor"):
        load_yaml(BOMB)
    with pytest.raises(GaspError, match="anchors or aliases"):
        FrontMatter("a: &x 1\nb: *x\n")


def test_plain_front_matter_with_star_and_ampersand_in_strings_still_loads():
    assert load_yaml('title: "R&D *draft*"\ntags: [a&b]\n') == {
        "title": "R&D *draft*", "tags": ["a&b"]}


@pytest.mark.slow
def test_non_utf8_file_name_is_reported_and_skipped(graph):
    cwd, wt = graph
    kg(cwd, "save", "-", "--session-id", "s1",
       input="entities:\n  - {id: rust, type: concept, body: safe}\n")
    base = os.fsencode(str(wt / "entities"))
    os.makedirs(base + b"/\xff\xfe")
    with open(base + b"/\xff\xfe/entity.md", "wb") as fh:
        fh.write(b"---\ntype: concept\n---\nx\n")
    os.makedirs(base + b"/rust/depends-on")
    with open(base + b"/rust/depends-on/\xff.md", "wb") as fh:
        fh.write(b"---\ntype: depends-on\n---\nx\n")
    git(wt, "add", "-A")
    git(wt, "commit", "-q", "-m", "a foreign name")
    for n, args in enumerate((["search", "rust"], ["info"], ["view"], ["save", "-"])):
        proc = kg(cwd, *args, "--session-id", "s1", ok=False,
                  input="entities:\n  - {id: gc, type: concept, body: x}\n")
        text = out(proc)
        assert proc.returncode == 0, (args, text)
        assert "internal error" not in text
        if n == 0:  # reported when the index reads it (later commands use the index)
            assert "skipped entities/\\xff\\xfe/entity.md: its name is not UTF-8" in text
    assert "rust" in out(kg(cwd, "search", "rust", "--session-id", "s1"))
