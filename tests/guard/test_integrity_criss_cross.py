"""Merges judged by meaning (issue 10): a criss-cross merge git resolves to the second
parent's line order, through real `git merge` with the GASP merge driver installed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.testing.events import goal_pair
from tests.testing.run import gasp, git, out

pytestmark = pytest.mark.slow

LOG = "state/events.jsonl"


def _at(repo: Path, when: int, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ, GIT_COMMITTER_DATE=f"{when} +0000", GIT_AUTHOR_DATE=f"{when} +0000")
    proc = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True)
    assert not check or proc.returncode == 0, out(proc)
    return proc


def _append(repo: Path, data: bytes, when: int) -> str:
    with open(repo / LOG, "ab") as f:
        f.write(data)
    git(repo, "add", LOG)
    _at(repo, when, "commit", "-q", "-m", "append")
    return git(repo, "rev-parse", "HEAD").strip()


def _criss_cross(agent: Path) -> tuple[bytes, bytes]:
    """base; main appends goal 2 (A1, older), b appends goal 3 (B1, newer); b merges A1
    (M2: 1 3 2) and main merges B1 (M1: 1 2 3), both through the driver. Return the
    logs of M1 and M2; main is checked out at M1."""
    _append(agent, goal_pair(1), 1_700_000_000)
    git(agent, "branch", "b")
    a1 = _append(agent, goal_pair(2), 1_700_000_100)
    git(agent, "checkout", "-q", "b")
    b1 = _append(agent, goal_pair(3), 1_700_000_200)
    _at(agent, 1_700_000_300, "merge", "-q", "--no-edit", a1)
    m2 = (agent / LOG).read_bytes()
    git(agent, "checkout", "-q", "main")
    _at(agent, 1_700_000_400, "merge", "-q", "--no-edit", b1)
    m1 = (agent / LOG).read_bytes()
    assert m1 == goal_pair(1) + goal_pair(2) + goal_pair(3)
    assert m2 == goal_pair(1) + goal_pair(3) + goal_pair(2)
    return m1, m2


def test_criss_cross_merge_resolved_to_the_second_parents_order_is_accepted(agent):
    assert "merge=gasp" in (agent / ".gitattributes").read_text()
    assert git(agent, "config", "merge.gasp.driver").strip()
    m1, m2 = _criss_cross(agent)
    # The virtual base (the merge of A1 and B1) equals M1, so git takes M2's bytes
    # without running the driver: the result does not start with the first parent's.
    proc = subprocess.run(["git", "merge", "--no-edit", "b"], cwd=agent, capture_output=True)
    assert proc.returncode == 0, out(proc)  # the pre-merge-commit guard let it through
    assert (agent / LOG).read_bytes() == m2 != m1
    assert len(git(agent, "rev-parse", "HEAD^2").strip()) == 40
    check = gasp(agent, "check")
    assert check.returncode == 0, out(check)


def test_criss_cross_merge_by_hand_with_git_commit_is_accepted(agent):
    """The same merge completed by `git commit` (the pre-commit guard, MERGE_HEAD)."""
    _m1, m2 = _criss_cross(agent)
    git(agent, "merge", "-q", "--no-commit", "b")
    assert (agent / LOG).read_bytes() == m2
    proc = subprocess.run(["git", "commit", "-q", "--no-edit"], cwd=agent, capture_output=True)
    assert proc.returncode == 0, out(proc)
    assert gasp(agent, "check").returncode == 0


def test_criss_cross_merge_dropping_a_line_fails_guard_and_check(agent):
    _m1, m2 = _criss_cross(agent)
    b = git(agent, "rev-parse", "b").strip()
    git(agent, "merge", "-q", "--no-commit", "b")
    dropped = m2.replace(goal_pair(3), b"")  # loses goal 3 (both parents have it)
    (agent / LOG).write_bytes(dropped)
    git(agent, "add", LOG)
    proc = subprocess.run(["git", "commit", "-q", "--no-edit"], cwd=agent, capture_output=True)
    text = out(proc)
    assert proc.returncode == 1, text
    # goal 3 is lines 5-6 of the first parent (M1: 1 2 3)
    assert f"{LOG}:5: [append-only, merge rule] the merge loses lines of" in text, text
    assert "line 5 of parent 1 is missing from the result" in text, text
    git(agent, "commit", "-q", "--no-verify", "--no-edit")
    bad = git(agent, "rev-parse", "HEAD").strip()
    check = gasp(agent, "check")
    text = out(check)
    assert check.returncode != 0, text
    assert bad[:12] in text and LOG in text and "missing from the result" in text, text
    assert b[:12] in text or git(agent, "rev-parse", "HEAD^1").strip()[:12] in text, text
