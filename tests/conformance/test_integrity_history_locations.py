"""The log's location is history too (issue 10): each commit's append-only paths come
from its own AGENT.md, through real git, the guard and `git gasp check`."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from git_gasp.conformance.history import cache as history_cache
from tests.testing.events import goal_pair
from tests.testing.run import gasp, git, out

pytestmark = pytest.mark.slow

LOG = "state/events.jsonl"
FRESH = "state/fresh.jsonl"


def _commit(repo: Path, *paths: str, verify: bool = True) -> subprocess.CompletedProcess:
    git(repo, "add", "--", *paths)
    args = ["git", "commit", "-q", "-m", "c"] + ([] if verify else ["--no-verify"])
    return subprocess.run(args, cwd=repo, capture_output=True)


def _with_events(agent: Path) -> None:
    with open(agent / LOG, "ab") as f:
        f.write(goal_pair(1) + goal_pair(2))
    assert _commit(agent, LOG).returncode == 0


def _yaml_move(agent: Path, where: str) -> None:
    manifest = (agent / "AGENT.md").read_text()
    (agent / "AGENT.md").write_text(manifest.replace(
        "executor: .agent/config.toml",
        f"executor: .agent/config.toml\nlocations:\n  log: {where}"))


def _table_move(agent: Path, where: str) -> None:
    with open(agent / "AGENT.md", "a") as f:
        f.write(f"\n## Locations\n\n| what | where |\n|---|---|\n| log | `{where}` |\n")


@pytest.mark.parametrize("move", [_yaml_move, _table_move])
def test_pointing_the_log_at_a_new_empty_file_is_refused_and_fails_check_4(agent, move):
    _with_events(agent)
    move(agent, FRESH)
    (agent / FRESH).write_bytes(b"")
    proc = _commit(agent, "AGENT.md", FRESH)
    text = out(proc)
    assert proc.returncode == 1, text  # the guard refuses it
    assert FRESH in text and LOG in text and "one-parent rule" in text, text
    assert _commit(agent, "AGENT.md", FRESH, verify=False).returncode == 0
    bad = git(agent, "rev-parse", "HEAD").strip()
    check = gasp(agent, "check")
    text = out(check)
    assert check.returncode != 0, text
    assert "FAIL 4" in text or "fail 4" in text.lower(), text
    assert bad[:12] in text and FRESH in text and LOG in text, text


def test_moving_the_log_with_its_history_passes(agent):
    _with_events(agent)
    _yaml_move(agent, "data/log.jsonl")
    (agent / "data").mkdir()
    git(agent, "mv", LOG, "data/log.jsonl")
    with open(agent / "data/log.jsonl", "ab") as f:
        f.write(goal_pair(3))
    proc = _commit(agent, "AGENT.md", "data/log.jsonl")
    assert proc.returncode == 0, out(proc)
    check = gasp(agent, "check")
    assert check.returncode == 0, out(check)


def test_dropping_a_moved_log_names_the_commit_and_both_paths(agent):
    _with_events(agent)
    _yaml_move(agent, FRESH)
    git(agent, "rm", "-q", "--", LOG)
    proc = _commit(agent, "AGENT.md")
    assert proc.returncode == 1 and "deleted" in out(proc) and FRESH in out(proc), out(proc)
    assert _commit(agent, "AGENT.md", verify=False).returncode == 0
    bad = git(agent, "rev-parse", "HEAD").strip()
    text = out(gasp(agent, "check"))
    assert f"{bad[:12]}" in text and "deleted" in text and FRESH in text and LOG in text, text


def test_a_path_the_locations_table_declares_append_only_is_guarded(agent):
    with open(agent / "AGENT.md", "a") as f:
        f.write("\n## Locations\n\n| what | where | notes |\n|---|---|---|\n"
                "| social | `memory/social_facts.jsonl` | append-only |\n")
    (agent / "memory").mkdir(exist_ok=True)
    (agent / "memory/social_facts.jsonl").write_bytes(b'{"id":"fact_1"}\n{"id":"fact_2"}\n')
    assert _commit(agent, "AGENT.md", "memory/social_facts.jsonl").returncode == 0
    (agent / "memory/social_facts.jsonl").write_bytes(b'{"id":"fact_1"}\n')
    proc = _commit(agent, "memory/social_facts.jsonl")
    assert proc.returncode == 1 and "memory/social_facts.jsonl" in out(proc), out(proc)
    assert _commit(agent, "memory/social_facts.jsonl", verify=False).returncode == 0
    text = out(gasp(agent, "check"))
    assert "memory/social_facts.jsonl" in text and "shrank" in text, text


def test_caches_made_under_the_old_rules_are_not_trusted():
    assert history_cache.CHECKER_VERSION >= 2
    key = history_cache._cache_key(b"", frozenset())
    history_cache.CHECKER_VERSION, saved = 1, history_cache.CHECKER_VERSION
    try:
        assert history_cache._cache_key(b"", frozenset()) != key
    finally:
        history_cache.CHECKER_VERSION = saved
