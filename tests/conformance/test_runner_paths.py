"""store.location.find_agent_root: the str `str(resolve_agent_root(...))` shows."""

from __future__ import annotations

import os

import pytest

from git_gasp.base.errors import UsageError
from git_gasp.store.location import NotAnAgentRepository, find_agent_root, resolve_agent_root


def test_the_agent_root_found_is_the_path_as_pathlib_shows_it(tmp_path, monkeypatch):
    agent = tmp_path / "repo" / "agent"
    (agent / "deep" / "er").mkdir(parents=True)
    (agent / "AGENT.md").write_bytes(b"---\nspec_version: 1\nagent_id: a\nidentity_hash: x\n"
                                     b"executor: e\n---\n")
    (tmp_path / "repo" / ".git").mkdir()
    (tmp_path / "file").write_bytes(b"")
    monkeypatch.chdir(agent / "deep" / "er")
    for path in (None, ".", "./", "..//er/.", str(agent) + "/", "", "../.."):
        found = find_agent_root(path)
        assert isinstance(found, str) and found == str(resolve_agent_root(path)), path
    assert find_agent_root(None) == str(agent)
    monkeypatch.chdir(tmp_path / "repo")  # the search stops at the work tree's top
    with pytest.raises(NotAnAgentRepository, match="not an agent repository: no AGENT.md"):
        find_agent_root(None)
    (tmp_path / "repo" / "state").mkdir()
    (tmp_path / "repo" / "state" / "events.jsonl").write_bytes(b"")
    assert find_agent_root(None) == os.getcwd()  # a log without AGENT.md: check 6 says so
    for bad, why in ((str(tmp_path / "nope"), "no such directory"),
                     (str(tmp_path / "file"), "not a directory")):
        with pytest.raises(UsageError, match=why):
            find_agent_root(bad)
