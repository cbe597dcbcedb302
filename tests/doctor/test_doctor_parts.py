"""doctor's parts without the CLI: reading hook managers' configs, the log check on a
long log, and the report's one-line-per-finding shape."""

from __future__ import annotations

import pytest

from git_gasp.doctor import agent_state
from git_gasp.doctor.finding import ERROR, OK, WARN, Finding, report
from git_gasp.githooks.manager_config import (
    ConfigError,
    husky_runs_guard,
    lefthook_stages,
    pre_commit_stages,
    runs_guard,
)
from tests.testing.events import goal_pair


@pytest.mark.parametrize("command, runs", [
    ("git gasp hook pre-commit", True),
    ("npm test && git gasp hook pre-merge-commit", True),
    ("/opt/venv/bin/git-gasp hook pre-commit", True),
    ("python -P -m git_gasp.cli.main hook pre-commit", True),
    ("echo 'git gasp hook pre-commit'", False),
    ("git gasp hook", False),
    ("git gasp check", False),
    ("git gasp hook pre-push", False),
    ("echo 'unbalanced && git gasp hook pre-commit", False),
])
def test_runs_guard_reads_shell_words(command, runs):
    assert runs_guard(command) is runs


def test_comments_count_only_where_the_shell_has_them():
    assert not runs_guard("# git gasp hook pre-commit", comments=True)
    assert runs_guard("git gasp hook pre-commit  # the guard", comments=True)


def test_pre_commit_stages(tmp_path):
    config = tmp_path / ".pre-commit-config.yaml"
    config.write_text("default_stages: [commit]\nrepos:\n"
                      "  - repo: local\n    hooks:\n"
                      "      - {id: g, entry: git gasp hook pre-commit, language: system}\n")
    assert pre_commit_stages(config) == {"pre-commit"}  # legacy name, default_stages
    config.write_text("repos:\n  - repo: https://x/git-gasp\n    rev: v1\n    hooks:\n"
                      "      - id: gasp-guard\n        stages: [pre-commit, merge-commit]\n")
    assert pre_commit_stages(config) == {"pre-commit", "pre-merge-commit"}
    config.write_text("repos:\n  - repo: local\n    hooks:\n      - id: gasp-guard\n"
                      "        entry: ./lint.sh\n")
    assert pre_commit_stages(config) == set()  # a local hook is what its entry runs
    config.write_text("")
    assert pre_commit_stages(config) == set()
    config.write_text("- just\n- a list\n")
    with pytest.raises(ConfigError, match="not a mapping"):
        pre_commit_stages(config)


def test_lefthook_local_file_adds_to_the_main_one(tmp_path):
    main, local = tmp_path / "lefthook.yml", tmp_path / "lefthook-local.yml"
    main.write_text("pre-commit:\n  scripts:\n    guard.sh:\n      runner: bash\n")
    local.write_text("pre-merge-commit:\n  jobs:\n    - group:\n        jobs:\n"
                     "          - run: git gasp hook pre-merge-commit\n")
    assert lefthook_stages([main, local]) == {"pre-merge-commit"}


def test_husky_script(tmp_path):
    script = tmp_path / "pre-commit"
    assert not husky_runs_guard(script)  # missing
    script.write_text("#!/bin/sh\n# git gasp hook pre-commit\nnpm test\n")
    assert not husky_runs_guard(script)
    script.write_text("#!/bin/sh\nnpm test\ngit gasp hook pre-commit\n")
    assert husky_runs_guard(script)


def test_a_long_log_is_checked_at_its_tail_with_true_line_numbers(agent, monkeypatch):
    log = agent / "state" / "events.jsonl"
    log.write_bytes(b"".join(goal_pair(i) for i in range(1, 201)))
    monkeypatch.setattr(agent_state, "LOG_SCAN_BYTES", 5000)
    (ok,) = agent_state.log(agent)
    assert ok.level == OK and ok.what.startswith("state/events.jsonl: the last ")
    with log.open("ab") as fh:
        fh.write(b"not json\n")
    (bad,) = agent_state.log(agent)
    assert bad.level == ERROR and bad.line == 401 and "events.jsonl:401: not a valid" in bad.what


def test_a_finding_is_one_line_and_a_fix_is_printed_once():
    long_fix = "add this:\n\n  - id: gasp-guard\n    stages: [pre-commit]\n"
    found = [Finding(ERROR, "first\nproblem", long_fix), Finding(WARN, "second", long_fix),
             Finding(OK, "fine", "never printed for ok")]
    text, code = report(found, "repo")
    assert code == 1
    assert text.splitlines() == [
        "git gasp doctor: repo",
        "error first problem",
        "      fix: add this: - id: gasp-guard stages: [pre-commit]",
        "warn  second",
        "      fix: as above",
        "ok    fine",
        "1 problem to fix, 1 warning",
    ]
    assert found[0].to_json() == {"level": "error", "what": "first problem",
                                  "fix": "add this: - id: gasp-guard stages: [pre-commit]",
                                  "topic": "hooks"}
    assert report([Finding(WARN, "w", "f")], "r") == ("git gasp doctor: r\nwarn  w\n"
                                                       "      fix: f\nhealthy (1 warning)", 0)
