"""`git gasp report BASE..HEAD`: the range's runs (agent, model, goal, outcome, commits,
lines), evals failing first, decisions and the AI share of the changed lines, in
Markdown, text and JSON; a range only, a one-line error otherwise."""

from __future__ import annotations

import json

import pytest

from tests.testing.json_shapes import keys_ok
from tests.testing.run import gasp, git, out
from tests.testing.stats_history import GPT, OPUS, Project, build_isolated

pytestmark = pytest.mark.slow  # builds a project with two runs and an import (~3 s)


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Project:
    return build_isolated(tmp_path_factory, "report")


def _report(p: Project, *args: str) -> str:
    proc = gasp(p.repo, "report", *args)
    assert proc.returncode == 0, out(proc)
    return proc.stdout.decode()


def test_json_names_the_runs_evals_and_decisions(project):
    p = project
    r = json.loads(_report(p, f"{p.base}..HEAD", "--format", "json"))
    keys_ok("git gasp report A..B --format json", r)
    assert (r["base"], r["head"]) == (p.base, p.tip)
    assert [c["subject"] for c in r["commits"]] == [
        "agent: util", "agent: main body", "human: b()", "agent: call main",
        "notes from cursor"]
    assert [c["run"] for c in r["commits"]] == [
        p.runs["claude"], p.runs["claude"], None, p.runs["codex"], None]
    assert r["runs"] == [
        {"run": p.runs["claude"], "agent": "claude-code", "model": OPUS,
         "goal": p.goals["claude"], "goal_title": "Helpers", "outcome": "completed",
         "commits": 2, "lines": 5},
        {"run": p.runs["codex"], "agent": "codex", "model": GPT, "goal": p.goals["codex"],
         "goal_title": "CLI", "outcome": "failed", "commits": 1, "lines": 3}]
    assert [(e["eval"], e["status"]) for e in r["evals"]] == [
        (p.evals["codex"], "Failed"), (p.evals["claude"], "Passed")]
    assert {d["decision"]: d["status"] for d in r["decisions"]} == {
        p.decisions["claude"]: "Approved", p.decisions["codex"]: "Rejected"}
    assert r["lines"] == {"total": 15, "agent": 10, "human": 5}
    assert r["by"]["agent"] == {"claude-code": 5, "codex": 3, "cursor": 2}


def test_markdown_fits_a_pull_request(project):
    p = project
    md = _report(p, f"{p.base}..HEAD")  # Markdown by default
    lines = md.splitlines()
    assert lines[0] == f"### git gasp report: {p.base[:12]}..{p.tip[:12]}"
    assert "5 commits, 3 explained by the agent's patches, from 2 runs." in lines
    assert "The lines it changed, at its head: 15 lines: 10 agent (66.7%), 5 human " \
           "(33.3%)." in lines
    run_rows = [ln for ln in lines if ln.startswith("| run_")]
    assert len(run_rows) == 2 and "| claude-code | claude-opus-4-5 | Helpers | completed | " \
        "2 | 5 |" in run_rows[0]
    assert md.index("| Failed | ruff |") < md.index("| Passed | pytest |")
    assert "| Rejected | lint fails |" in md and "http" not in md
    # the short ids are those `git gasp log` prints
    short = run_rows[0].split(" | ")[0][2:]
    assert short.startswith("run_...") and p.runs["claude"].endswith(short[7:])


def test_text_and_a_range_without_agents(project):
    p = project
    text = _report(p, f"{p.base}..HEAD", "--format", "text")
    assert "runs:" in text and "evals (failing first):" in text and "|" not in text
    human = git(p.repo, "log", "-1", "--format=%H", "--grep=human: b()").strip()
    none = _report(p, f"{human}~1..{human}", "--format", "text")
    assert "1 commit, 0 explained by the agent's patches, from 0 runs." in none
    assert "runs: none" in none
    assert "3 lines: 0 agent (0.0%), 3 human (100.0%)" in none


@pytest.mark.parametrize(("args", "message"), [
    (["HEAD"], "name a range, BASE..HEAD"),
    (["nosuch..HEAD"], "unknown revision 'nosuch'"),
    (["HEAD~1...HEAD"], "name a range as A..B"),
])
def test_bad_input_is_one_line(project, args, message):
    proc = gasp(project.repo, "report", *args)
    err = proc.stderr.decode().strip().splitlines()
    assert proc.returncode == 2 and len(err) == 1, out(proc)
    assert err[0].startswith("git gasp: error: ") and message in err[0]
