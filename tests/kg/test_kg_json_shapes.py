"""`git gasp kg … --json` keep the shapes docs/json.md documents."""

from __future__ import annotations

import pytest

from tests.kg.helpers import kg_json
from tests.testing.json_shapes import keys_ok

pytestmark = pytest.mark.slow

DOC = """
summary: a person
entities:
  - label: Ada
    type: person
    body: Ada writes the retry code.
"""


def test_kg_shapes(graph):
    cwd, _wt = graph
    keys_ok("git gasp kg status --json", kg_json(cwd, "status", "--session-id", "s1"))
    saved = kg_json(cwd, "save", "-", "--session-id", "s1", input=DOC)
    keys_ok("git gasp kg save FILE --json", saved)
    info = kg_json(cwd, "info", "--session-id", "s1")
    keys_ok("git gasp kg info --json", info)
    assert set(info["relations"]) == {"total", "valid", "superseded", "undeclared"}
    keys_ok("git gasp kg search QUERY --json", kg_json(cwd, "search", "ada",
                                                       "--session-id", "s1"))
