"""`base.yamlread.load_flat` either agrees with `yaml.safe_load` or declines (None):
never a different mapping."""

from __future__ import annotations

import string

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from git_gasp.base.yamlread import load_flat

pytestmark = pytest.mark.slow  # keeps the fast loop under a minute

TRICKY = ["1", "0", "007", "0b101", "0x1f", "1_000", "1e5", "1.5", ".5", ".inf", ".NaN",
          "yes", "No", "ON", "off", "y", "N", "true", "False", "null", "Null", "~", "",
          "2026-01-01", "12:30", "1:20", "a: b", "a #b", "a#b", "#x", "- x", "[a]", "{a: 1}",
          "&a", "*a", "!tag", "|", ">", "%x", "@x", "`x`", '"q"', '"a\\"b"', "'s'",
          "2d9ceaa180abf2508d5af840301d3c713928e295ee773367314c63ee34e5435b",
          "0d9c", "5e3", "deadbeef", ".agent/config.toml", "/abs/path", "_x", "a b  c",
          "evolve", "x:y", "a,b", "é", "a\tb", "=", "<<", "?", "? x", "-", "--", "---",
          "a ", " a", "[]", "[ ]", "[a, b]", "[a,b]", "[ a ,b ]", '["x", y]', "[a, ]", "[,]",
          "[a, [b]]", "[[a], []]", "[1, 007]", "[yes]", "[null]", "[a: b]", "[a #b]", '["a, b"]',
          "[rust-lang, it's]", "[a]]", "[[a]", "[2026-01-01]", "[.5]", "[a b, c]", "[~]"]
KEYS = ["agent_id", "spec_version", "yes", "on", "y", "null", "_k", "k-1", "K", "1", "a b"]

value = st.one_of(st.sampled_from(TRICKY),
                  st.text(alphabet=string.ascii_letters + string.digits + " _./:#-'\",",
                          max_size=12))
line = st.one_of(
    st.tuples(st.sampled_from(KEYS), st.sampled_from([": ", ":", ":  ", " : ", ":\t"]),
              value).map("".join),
    st.sampled_from(["", "# comment", "  indented: 1", "---", "...", "  - item", " "]),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(line, max_size=6))
def test_flat_agrees_with_yaml_or_declines(lines: list[str]) -> None:
    text = "\n".join(lines) + "\n"
    flat = load_flat(text)
    if flat is None:
        return
    try:
        expected = yaml.safe_load(text)
    except yaml.YAMLError:
        raise AssertionError(f"load_flat read text YAML refuses: {text!r}") from None
    assert (expected or {}) == flat, text


def test_manifest_and_digest_read_without_yaml() -> None:
    text = ('spec_version: 1\nagent_id: "evolve"\n'
            "identity_hash: 57790f37c9a272d7f9d7596a1cefec39e731e4b8d4c8da8ecd86303ea5b090d6\n"
            "executor: .agent/config.toml\n")
    assert load_flat(text) == yaml.safe_load(text)
    assert load_flat(text)["spec_version"] == 1


def test_declines_what_it_does_not_know() -> None:
    for text in ["a:\n  b: 1\n", "a: [1, 2.5]\n", "a: yes\n", "a: 0b11\n", "a: 2026-01-01\n",
                 "a: 1.5\n", "a: 1\na: 2\n", "a: b: c\n", "a: x #c\n", "a: 'q'\n"]:
        assert load_flat(text) is None, text


@pytest.mark.slow
@settings(max_examples=4000, deadline=None)
@given(st.lists(line, max_size=8))
def test_flat_agrees_with_yaml_or_declines_many(lines: list[str]) -> None:
    test_flat_agrees_with_yaml_or_declines.hypothesis.inner_test(lines)
