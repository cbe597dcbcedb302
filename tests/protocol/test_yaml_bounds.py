"""Outside YAML that PyYAML's constructor cannot turn into Python values (an integer of
more digits than Python converts, nesting deeper than the stack) is a one-line parse
error of the file, never an internal error."""

from __future__ import annotations

import pytest

from git_gasp.base.errors import GaspError
from git_gasp.kg.frontmatter import load_yaml
from git_gasp.protocol.manifest import ManifestError, parse_manifest
from git_gasp.protocol.skill import SkillError, parse_skill

HUGE = "9" * 5000
DEEP = "[" * 5000 + "]" * 5000


@pytest.mark.parametrize("value", [HUGE, DEEP])
def test_a_manifest_with_an_unconvertible_value_is_a_manifest_error(value):
    text = f"---\nspec_version: {value}\nagent_id: a\n---\n# A\n".encode()
    with pytest.raises(ManifestError, match="does not parse"):
        parse_manifest(text)


@pytest.mark.parametrize("value", [HUGE, DEEP])
def test_skill_front_matter_with_an_unconvertible_value_is_a_skill_error(value):
    with pytest.raises(SkillError, match="does not parse"):
        parse_skill(f"---\nname: s\ndescription: d\nn: {value}\n---\nbody\n".encode())


@pytest.mark.parametrize("value", [HUGE, DEEP])
def test_kg_front_matter_with_an_unconvertible_value_is_a_gasp_error(value):
    with pytest.raises(GaspError, match="YAML does not parse"):
        load_yaml(f"id: x\nn: {value}\n")

