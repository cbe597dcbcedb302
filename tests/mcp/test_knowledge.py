"""`kg_search` and `kg_read`, listed when a knowledge graph is configured, answer from
the graph `git gasp kg` keeps (the SDK's client over stdio, as in test_server.py)."""

from __future__ import annotations

import pytest

from tests.kg.helpers import kg
from tests.mcp.client import drive, ok, refused
from tests.testing.run import git

pytestmark = pytest.mark.slow  # a knowledge graph cloned, saved and pushed first

DOC = """
date: 2026-03-01
entities:
  - {id: tokenizer, label: Tokenizer, type: component, body: "Splits unicode text."}
  - {id: grammar, label: Grammar, type: concept, body: "The rules."}
relations:
  - {from: tokenizer, type: depends-on, to: grammar, body: "It reads the rules."}
"""


def test_kg_tools_when_a_graph_is_configured(agent, tmp_path, monkeypatch):
    monkeypatch.setenv("PERSTATE_HOME", str(tmp_path / "perstate-home"))
    monkeypatch.setenv("PERSTATE_SYNC_WINDOW", "3600")
    monkeypatch.delenv("PERSTATE_SESSION_ID", raising=False)
    remote = tmp_path / "memory.git"
    git(tmp_path, "init", "--quiet", "--bare", "-b", "main", str(remote))
    kg(tmp_path, "init", "--repo", str(remote), "--branch", "main", "--yes",
       "--session-id", "s1")
    kg(tmp_path, "save", "-", "--session-id", "s1", input=DOC)

    async def body(s):
        names = {t.name for t in (await s.list_tools()).tools}
        assert {"kg_search", "kg_read"} <= names
        found = ok(await s.call_tool("kg_search", {"query": "unicode"}))
        assert [h["id"] for h in found["results"] if h["kind"] == "entity"] == ["tokenizer"]
        entity = ok(await s.call_tool("kg_read", {"id": "tokenizer"}))
        assert "Splits unicode text." in entity["text"]
        assert entity["relations"] == [{"type": "depends-on", "to": "grammar"}]
        assert "no entity 'nope'" in refused(await s.call_tool("kg_read", {"id": "nope"}))
        assert "invalid entity id" in refused(await s.call_tool("kg_read", {"id": "../x"}))
        assert ok(await s.call_tool("gasp_ready", {}))["ready"] == []

    drive(agent, body, tmp_path / "err.log")
