"""Stats survive the most common merge: the project's agent branch squash-merged onto
its base, every agent commit left unreachable, gives the same agent lines by agent,
model and goal as before (blame follows the pins through the squash: `rewrites`)."""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

from tests.testing.run import gasp, git, out
from tests.testing.stats_history import GPT, OPUS, build

pytestmark = pytest.mark.slow  # builds a project with two runs and an import (~3 s)


def _stats(repo, *args: str) -> dict:
    proc = gasp(repo, "stats", "--json", *args)
    assert proc.returncode == 0, out(proc)
    return json.loads(proc.stdout)


def test_a_squash_merge_keeps_every_agent_line(tmp_path):
    p = build(tmp_path)
    before = _stats(p.repo)
    assert before["lines"] == {"total": 22, "agent": 10, "human": 12}

    # the history after the base was a branch: squash it onto the base, drop the branch
    git(p.repo, "branch", "-m", "main", "feature")
    git(p.repo, "checkout", "-q", "-b", "main", p.base)
    git(p.repo, "merge", "--squash", "feature")
    now = f"{int(time.time()) + 5} +0000"  # merged after the runs (the suite pins older dates)
    subprocess.run(["git", "commit", "-q", "--no-verify", "-m", "Squashed: helpers (#1)"],
                   cwd=p.repo, check=True, capture_output=True,
                   env=dict(os.environ, GIT_AUTHOR_DATE=now, GIT_COMMITTER_DATE=now))
    git(p.repo, "branch", "-D", "feature")
    squash = git(p.repo, "rev-parse", "HEAD").strip()
    assert git(p.repo, "rev-list", "--count", "HEAD").strip() == "2"
    assert git(p.repo, "branch", "--contains", p.tip).strip() == ""  # the agents' commits

    after = _stats(p.repo)
    assert after["rev"] == squash
    assert after["lines"] == before["lines"]
    assert after["by"]["agent"] == {"claude-code": 5, "codex": 3, "cursor": 2}
    assert after["by"]["model"] == {OPUS: 5, GPT: 3, "openai/gpt-4o": 2}
    assert after["by"]["goal"] == before["by"]["goal"]
    assert after["sources"] == before["sources"]
    # Bo's lines came in with the squash too, and stay a person's
    proc = gasp(p.repo, "blame", "--json", "HEAD", "--", "util.py")
    rows = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    assert [r["patch"] is not None for r in rows] == [True, True, False, False, False]
    assert all(r["rewritten"]["by"] == "lines" for r in rows[:2])


def test_the_report_of_a_squash_merge_names_the_runs_its_lines_came_from(tmp_path):
    p = build(tmp_path)
    git(p.repo, "branch", "-m", "main", "feature")
    git(p.repo, "checkout", "-q", "-b", "main", p.base)
    git(p.repo, "merge", "--squash", "feature")
    now = f"{int(time.time()) + 5} +0000"
    subprocess.run(["git", "commit", "-q", "--no-verify", "-m", "Squashed (#1)"],
                   cwd=p.repo, check=True, capture_output=True,
                   env=dict(os.environ, GIT_AUTHOR_DATE=now, GIT_COMMITTER_DATE=now))
    proc = gasp(p.repo, "report", f"{p.base}..HEAD", "--format", "json")
    assert proc.returncode == 0, out(proc)
    report = json.loads(proc.stdout)
    assert [c["run"] for c in report["commits"]] == [None]  # the squash pins nothing
    assert {r["run"]: r["lines"] for r in report["runs"]} == {p.runs["claude"]: 5,
                                                              p.runs["codex"]: 3}
    assert {e["status"] for e in report["evals"]} == {"Passed", "Failed"}
    assert {d["status"] for d in report["decisions"]} == {"Approved", "Rejected"}
