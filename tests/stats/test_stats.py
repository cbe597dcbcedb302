"""`git gasp stats` on a history of known authorship (tests/testing/stats_history): exact
line counts by agent, model, person and goal, the activity of the log, a range, and the
same answer as summing `git gasp blame --json` over the tree; bad input is one line."""

from __future__ import annotations

import json

import pytest

from tests.testing.json_shapes import keys_ok
from tests.testing.run import gasp, git, out
from tests.testing.stats_history import GPT, OPUS, Project, build_isolated

pytestmark = pytest.mark.slow  # builds a project with two runs and an import (~3 s)


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Project:
    return build_isolated(tmp_path_factory, "stats")


def _stats(p: Project, *args: str) -> dict:
    proc = gasp(p.repo, "stats", "--json", *args)
    assert proc.returncode == 0, out(proc)
    return json.loads(proc.stdout)


def test_exact_counts_at_the_tip(project):
    s = _stats(project)
    keys_ok("git gasp stats --json", s)
    assert s["rev"] == project.tip and s["changed"] is None
    assert s["lines"] == {"total": 22, "agent": 10, "human": 12}
    assert s["files"] == 4
    assert s["by"]["agent"] == {"claude-code": 5, "codex": 3, "cursor": 2}
    assert s["by"]["model"] == {OPUS: 5, GPT: 3, "openai/gpt-4o": 2}
    assert s["by"]["goal"] == {project.goals["claude"]: 5, project.goals["codex"]: 3}
    assert s["by"]["person"] == {"Ann": {"agent": 8, "human": 7},
                                 "Bo": {"agent": 0, "human": 3},
                                 "Cy": {"agent": 2, "human": 2}}
    assert s["sources"] == {"gasp": 8, "agent-trace": 2}
    a = s["activity"]
    assert (a["sessions"], a["model_calls"], a["tool_calls"]) == (2, 3, 3)
    assert a["tokens"] == {"input_tokens": 250, "output_tokens": 30}
    assert a["evals"] == {"run": 2, "passed": 1, "failed": 1, "pass_rate": 0.5}
    assert a["patches"] == {"proposed": 0, "promoted": 1, "rejected": 1}
    assert a["by"]["agent"]["claude-code"] == {"sessions": 1, "tool_calls": 2,
                                               "model_calls": 2}
    assert a["by"]["model"] == {OPUS: 2, GPT: 1}


def test_stats_is_the_sum_of_blame_json_over_the_tree(project):
    p = project
    s = _stats(p)
    files = git(p.repo, "ls-tree", "-r", "--name-only", "HEAD").split()
    total = agent = 0
    by_run: dict[str, int] = {}
    for name in files:
        proc = gasp(p.repo, "blame", "--json", "HEAD", "--", name)
        assert proc.returncode == 0, out(proc)
        for line in proc.stdout.decode().splitlines():
            row = json.loads(line)
            total += 1
            is_agent = row["patch"] is not None or (row.get("ai") or {}).get("type") == "ai"
            agent += is_agent
            if row["run"]:
                by_run[row["run"]] = by_run.get(row["run"], 0) + 1
    assert s["lines"] == {"total": total, "agent": agent, "human": total - agent}
    assert by_run == {p.runs["claude"]: 5, p.runs["codex"]: 3}


def test_at_an_older_revision_and_over_a_range(project):
    p = project
    first = git(p.repo, "rev-list", "--reverse", "HEAD").split()
    s = _stats(p, first[0])
    assert s["lines"] == {"total": 7, "agent": 0, "human": 7}
    # the range after the base: every agent line is new; the README is not
    r = _stats(p, f"{p.base}..HEAD")
    assert r["lines"] == _stats(p)["lines"]
    assert r["changed"]["commits"] == 5
    assert r["changed"]["lines"] == {"total": 15, "agent": 10, "human": 5}
    assert r["changed"]["files"] == 3
    assert r["activity"]["sessions"] == 2
    # the codex commit alone: its run only, its patch rejected, its eval failed
    codex = git(p.repo, "log", "-1", "--format=%H", "--grep=call main").strip()
    c = _stats(p, f"{codex}~1..{codex}")
    assert c["changed"]["lines"] == {"total": 3, "agent": 3, "human": 0}
    assert c["activity"]["sessions"] == 1
    assert c["activity"]["patches"] == {"proposed": 0, "promoted": 0, "rejected": 1}
    assert c["activity"]["evals"]["pass_rate"] == 0.0


def test_since_a_date_counts_the_commits_and_runs_since(project):
    s = _stats(project, "--since", "@0")
    assert s["changed"]["commits"] == 6 and s["activity"]["sessions"] == 2
    later = _stats(project, "--since", "2999-01-01")
    assert later["changed"] == {**later["changed"], "commits": 0}
    assert later["changed"]["lines"]["total"] == 0 and later["activity"]["sessions"] == 0


def test_text_and_markdown(project):
    proc = gasp(project.repo, "stats", "--by", "agent")
    assert proc.returncode == 0, out(proc)
    text = proc.stdout.decode()
    assert "22 lines: 10 agent (45.5%), 12 human (54.5%) in 4 files" in text
    assert "claude-code  5" in text and "by model" not in text
    assert "evals 2 run: 1 passed, 1 failed (50.0% pass)" in text
    md = gasp(project.repo, "stats", "--format", "markdown").stdout.decode()
    assert "| claude-code | 5 |" in md and f"| {OPUS} | 5 |" in md
    assert "| Bo | 0 agent, 3 human |" in md


@pytest.mark.parametrize(("args", "message"), [
    (["nosuchrev"], "unknown revision 'nosuchrev'"),
    (["HEAD..nosuch"], "unknown revision 'nosuch'"),
    (["--since", "the day before"], "--since the day before: neither a date"),
    (["HEAD~1..HEAD", "--since", "yesterday"], "give a range or --since, not both"),
])
def test_bad_input_is_one_line(project, args, message):
    proc = gasp(project.repo, "stats", *args)
    err = proc.stderr.decode().strip().splitlines()
    assert proc.returncode == 2 and len(err) == 1, out(proc)
    assert err[0].startswith("git gasp: error: ") and message in err[0]


def test_bad_by_is_a_usage_error(project):
    proc = gasp(project.repo, "stats", "--by", "colour")
    assert proc.returncode == 2, out(proc)
    assert b"Traceback" not in proc.stderr and b"colour" in proc.stderr
