"""Lifting rules on the real sessions and on small hand-made record lists."""

from __future__ import annotations

import pytest

from git_gasp.adapters import claude_code, codex
from git_gasp.adapters.lifting import (
    RULES,
    command_of,
    commit_message,
    commit_of,
    edited_files,
    is_test_command,
    lift,
    shell_writes,
)
from git_gasp.adapters.records import TOOL_RESULT, TOOL_USE, USER_PROMPT, Record
from tests.adapters.samples import CLAUDE_TRANSCRIPT, CODEX_ROLLOUT


def by_kind(items, kind):
    return [i for i in items if i.kind == kind]


def test_claude_sample_lifts_the_whole_spine():
    items = lift(claude_code.read_transcript(CLAUDE_TRANSCRIPT).records)
    assert [i.kind for i in items] == ["goal", "eval", "failure", "eval", "status", "patch",
                                       "decision", "status"]
    assert all(i.rule in RULES and i.metadata == {"lifted_by": i.rule} for i in items)
    goal, failed, failure, passed, resolved, patch, decision, achieved = items
    # the passing run after the edit resolves the failure; the promotion achieves the goal
    assert (resolved.data["of"], resolved.data["status"]) == (failure.key, "Resolved")
    assert resolved.rule == "passing-eval-resolves-failure" and resolved.after == passed.after
    assert (achieved.data["of"], achieved.data["status"]) == (goal.key, "Achieved")
    assert achieved.rule == "promoted-patch-achieves-goal" and achieved.after == decision.after
    assert goal.data["title"] == "Fix the add function so the test passes, then commit"
    assert (failed.data["status"], failed.data["score"]) == ("Failed", 0.0)
    assert "1 failed" in failure.data["summary"]
    assert (passed.data["status"], passed.data["score"]) == ("Passed", 1.0)
    assert patch.data["commit"] == "25b87ee" and patch.data["title"] == "Fix add"
    assert patch.data["files"] == ["/home/dev/app/calc.py", "/home/dev/app/test_calc.py"]
    assert patch.data["goal"] == goal.key and patch.data["addresses"] == [failure.key]
    assert patch.data["validated_by"] == passed.key
    assert decision.data == {"status": "Approved", "patch": patch.key, "eval": passed.key,
                             "reason": decision.data["reason"]}
    assert decision.rule == "passing-eval-decision" and decision.after == patch.after


def test_codex_sample_never_passed_so_no_decision():
    # In the recorded Codex session pytest was not installed: both runs failed.
    items = lift(codex.read_rollout(CODEX_ROLLOUT).records)
    assert [i.kind for i in items] == ["goal", "eval", "failure", "eval", "failure", "patch"]
    patch = items[-1]
    assert patch.data["commit"] == "aa3392c" and patch.data["files"] == ["calc.py", "test_calc.py"]
    assert patch.data["validated_by"] == items[3].key
    assert [e.data["status"] for e in by_kind(items, "eval")] == ["Failed", "Failed"]
    assert "No module named pytest" in items[2].data["summary"]


def _session(*steps):
    """Records from (kind, ...) steps: ("prompt", text) / ("tool", name, input, output, err)."""
    recs, n = [], 0
    for step in steps:
        n += 1
        if step[0] == "prompt":
            recs.append(Record(USER_PROMPT, f"p{n}", None, None, {"text": step[1]}))
        else:
            _, name, inp, output, err = step
            recs.append(Record(TOOL_USE, f"t{n}", None, None,
                               {"tool_use_id": f"t{n}", "name": name, "input": inp}))
            recs.append(Record(TOOL_RESULT, f"result:t{n}", f"t{n}", None,
                               {"tool_use_id": f"t{n}", "output": output, "is_error": err,
                                "exit_code": 1 if err else 0}))
    return recs


def bash(cmd, output="", err=False):
    return ("tool", "Bash", {"command": cmd}, output, err)


def test_eval_after_the_commit_validates_the_patch_and_decides():
    items = lift(_session(
        ("prompt", "make it work\nplease"), ("prompt", "also docs"),
        ("tool", "Edit", {"file_path": "a.py"}, "ok", False),
        bash("git commit -am 'wip'", "[main abc1234] wip"),
        bash("cargo test", "test result: ok. 3 passed"),
    ))
    assert [i.kind for i in items] == ["goal", "task", "patch", "eval", "decision", "status"]
    assert items[1].data["goal"] == items[0].key and items[0].data["title"] == "make it work"
    assert items[3].data["validates"] == items[2].key
    assert items[4].after == items[3].after and items[4].data["eval"] == items[3].key


def test_failed_edit_commit_without_edits_and_non_test_commands_lift_nothing():
    items = lift(_session(
        ("tool", "Write", {"file_path": "a.py"}, "denied", True),  # a failed edit
        bash("git commit -m x", "[main 1234567] x"),  # nothing edited: no patch
        bash("ls -la"), bash("echo pytest"),
    ))
    assert items == []


def test_pipe_hiding_the_exit_code_still_fails_on_the_summary():
    items = lift(_session(bash("pytest -q | tail -2", "F.\n1 failed, 1 passed in 0.1s")))
    assert [i.kind for i in items] == ["eval", "failure"]
    assert items[0].data["status"] == "Failed"


def test_a_later_edit_ends_validation_of_the_previous_patch():
    items = lift(_session(
        ("tool", "Edit", {"file_path": "a.py"}, "", False),
        bash("git commit -qm one", "[m 1111111] one"),
        ("tool", "Edit", {"file_path": "b.py"}, "", False), bash("npm test"),
    ))
    assert [i.kind for i in items] == ["patch", "eval"] and "validates" not in items[1].data


@pytest.mark.parametrize("cmd", [
    "pytest", "python3 -m pytest -q tests", "python -m unittest discover", "tox -e py311",
    "npm test", "npm run build", "yarn test", "cargo test --all", "go test ./...", "make",
    "make test", "mvn -q verify", "./gradlew build", "npx jest", "bundle exec rspec", "ctest",
    "cd sub && pytest -x", "uv run pytest",
])
def test_test_and_build_commands(cmd):
    assert is_test_command(cmd)


@pytest.mark.parametrize("cmd", [
    "ls", "git commit -m 'run pytest'", "echo done", "cat Makefile", "pip install pytest-cov",
    "grep -r maker .", "git -c user.name=x commit -qm 'tests pass'",
])
def test_not_test_commands(cmd):
    assert not is_test_command(cmd)


def test_helpers():
    assert command_of({"cmd": ["bash", "-lc", "make test"]}) == "make test"
    assert command_of({"command": "ls"}) == "ls" and command_of("x") is None
    assert commit_of("[main (root-commit) 0a1b2c3] Initial\n 1 file changed") == (
        "0a1b2c3", "Initial")
    assert commit_of("25b87ee Fix add") == ("25b87ee", "Fix add")
    assert commit_of("nothing to commit") == (None, None)
    assert commit_message("git commit -qm 'Fix add' && git log") == "Fix add"
    assert commit_message('git commit --message="a b"') == "a b"
    assert edited_files("apply_patch", {"input": "*** Begin Patch\n*** Update File: x.py\n"}) == [
        "x.py"]
    assert edited_files("Read", {"file_path": "x"}) is None
    assert shell_writes("sed -i s/a\\ -\\ b/a\\ +\\ b/ calc.py") == ["calc.py"]
    assert shell_writes("pytest 2>&1 | tail -3 > /dev/null") == []


@pytest.mark.parametrize("path, read", [(CLAUDE_TRANSCRIPT, claude_code.read_transcript),
                                        (CODEX_ROLLOUT, codex.read_rollout)])
def test_lifter_resumed_from_its_state_after_every_record_lifts_the_same(path, read):
    """A hook process resumes the rules from the saved state, one record at a time."""
    import json

    from git_gasp.adapters.lifting import Lifter

    records = read(path).records
    items, state = [], None
    for rec in records:
        lifter = Lifter(json.loads(json.dumps(state)) if state is not None else None)
        items += lifter.feed(rec)
        assert lifter.fed == 1
        state = lifter.to_json()
    whole = lift(records)
    assert [(i.kind, i.key, i.after, i.data) for i in items] == [
        (i.kind, i.key, i.after, i.data) for i in whole]
    assert state["uses"] == {} and state["edits"] == []  # nothing left over at the end


def test_a_failure_is_resolved_only_by_a_pass_after_an_edit():
    failing = bash("pytest -q", "1 failed in 0.1s", True)
    items = lift(_session(
        ("prompt", "fix it"), failing,
        bash("pytest -q", "1 passed"),  # a rerun with no change: the failure stays open
        ("tool", "Edit", {"file_path": "a.py"}, "", False),
        bash("pytest -q", "1 passed"),  # after the edit: resolved, once
        bash("pytest -q", "1 passed"),
    ))
    kinds = [i.kind for i in items]
    assert kinds == ["goal", "eval", "failure", "eval", "eval", "status", "eval"]
    assert items[5].data == {"of": items[2].key, "status": "Resolved",
                             "reason": "pytest -q passed after the change"}
    # never promoted (no commit): the goal is left Open
    assert not any(i.data.get("status") == "Achieved" for i in items)


def test_one_prompt_gives_one_goal():
    prompt = ("prompt", "fix the add function\n")
    items = lift(_session(prompt, ("prompt", "fix the add function"), prompt,
                          ("prompt", "and the docs")))
    assert [i.kind for i in items] == ["goal", "task"]
    assert items[1].data["title"] == "and the docs"
