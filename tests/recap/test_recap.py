"""`git gasp recap`: the account of a run on the shipped fixture, its history extended
through the real CLI with a failing then passing eval, a patch pinned to a commit, a
decision with its reason and a task left open; Markdown, text, JSON (against
docs/json.md), --since, the journal projection, and bad input as one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_gasp.protocol.envelope import parse_log
from git_gasp.protocol.fold import fold
from git_gasp.recap import render
from git_gasp.recap.account import recap_runs, run_ids
from tests.testing.json_shapes import keys_ok
from tests.testing.paths import REPO_ROOT
from tests.testing.run import gasp, git, ok, out

EVAL = "pytest tests/test_retry.py"



@pytest.fixture
def worked(fixture_repo) -> tuple[Path, dict]:
    """The fixture plus one finished run recorded through the CLI (module doc)."""
    repo = fixture_repo
    ids = {"run": ok(repo, "run", "start", "--task", "fix the flaky retry",
                      "--goal", "goal_retry")}
    ids["failure"] = ok(repo, "record", "failure", "--summary",
                         "retry drops the counter after a timeout")
    ids["hypothesis"] = ok(repo, "record", "hypothesis", "--statement",
                            "the counter is not persisted", "--explains", ids["failure"])
    ok(repo, "record", "eval", "--command", EVAL, "--status", "Failed")
    (repo / "retry.py").write_text("COUNTER_FILE = 'retry.count'\n")
    git(repo, "add", "retry.py")  # the work's commit (the lease file is never committed)
    git(repo, "commit", "-qm", "Persist the retry counter")
    ids["commit"] = git(repo, "rev-parse", "HEAD").strip()
    ids["patch"] = ok(repo, "record", "patch", "--title", "persist the counter",
                       "--advances", "goal_retry", "--addresses", ids["failure"],
                       "--hypothesis", ids["hypothesis"], "--commit", ids["commit"])
    ok(repo, "record", "eval", "--command", EVAL, "--status", "Passed",
        "--validates", ids["patch"])
    ok(repo, "record", "decision", "--status", "Approved", "--reason",
        "the retry test passes now", "--patch", ids["patch"])
    ids["task"] = ok(repo, "record", "task", "--title", "cover the timeout path in CI",
                      "--goal", "goal_retry")
    ok(repo, "run", "finish", "--outcome", "promoted")
    assert gasp(repo, "commit-run", "--no-journal").returncode == 0
    return repo, ids


@pytest.mark.slow  # a dozen CLI runs build the history
def test_markdown_names_goal_evals_commit_decision_and_open_task(worked):
    repo, ids = worked
    short = ids["run"][:12]  # a unique prefix, as other commands take it
    proc = gasp(repo, "recap", short, "--format", "markdown")
    assert proc.returncode == 0, out(proc)
    md = proc.stdout.decode()
    assert md.startswith(f"## {ids['run']}\n")
    assert "- goal: Make retry reliable [Open] (goal_retry)" in md
    assert f"- `{EVAL}`: Failed, then Passed" in md
    assert f"- persist the counter [Promoted], commit `{ids['commit']}`" in md
    assert "- Approved: the retry test passes now" in md
    assert ("- retry drops the counter after a timeout [Open] — why: the counter is not "
            "persisted") in md
    assert "### Left open\n\n- task: cover the timeout path in CI [Open]\n" in md
    assert "failing eval" not in md  # the eval passed last
    # the short form `log` prints names it too, and the text form says the same
    tail = ids["run"][-8:]
    text = gasp(repo, "recap", f"run_...{tail}").stdout.decode()
    assert text.startswith(f"run {ids['run']}\n") and f"{EVAL}: Failed, then Passed" in text
    # without RUN: the latest run
    assert gasp(repo, "recap", "--format", "markdown").stdout.decode() == md


@pytest.mark.slow
def test_json_shape_since_and_journal(worked):
    repo, ids = worked
    doc = json.loads(gasp(repo, "recap", "--since", "2000-01-01", "--json").stdout)
    keys_ok("git gasp recap --json", doc)
    assert [r["id"] for r in doc["runs"]] == ["run_42", ids["run"]]
    for run in doc["runs"]:
        keys_ok("Recap runs", run)
    ours = doc["runs"][1]
    assert [e["status"] for e in ours["evals"]] == ["Failed", "Passed"]
    assert ours["patches"][0]["commit"] == ids["commit"]
    assert ours["open_tasks"][0]["id"] == ids["task"] and ours["failing_evals"] == []
    assert ours["status"] == "finished" and ours["outcome"] == "promoted"
    # --journal: the finished run's Markdown appended once and committed
    proc = gasp(repo, "recap", ids["run"], "--journal", "--format", "markdown")
    assert proc.returncode == 0, out(proc)
    journal = (repo / "journal/JOURNAL.md").read_text()
    assert journal == "# Journal\n\n" + proc.stdout.decode()
    assert git(repo, "log", "-1", "--format=%s").strip() == f"journal: recap of {ids['run']}"
    assert git(repo, "status", "--porcelain", "--", "journal") == ""
    again = gasp(repo, "recap", ids["run"], "--journal")
    assert "appended 0 run(s)" in out(again)
    assert (repo / "journal/JOURNAL.md").read_text() == journal
    check = gasp(repo, "check")
    assert check.returncode == 0, out(check)


@pytest.mark.parametrize("args, message", [
    (("run_nope",), "no run 'run_nope' in state/events.jsonl"),
    (("run_42", "--since", "yesterday"), "give RUN or --since, not both"),
    (("--since", "not a date"), "--since not a date: neither an event id"),
    (("--since", "2999-01-01"), "no run started since 2999-01-01"),
])
def test_bad_input_is_one_line(fixture_repo, args, message):
    proc = gasp(fixture_repo, "recap", *args)
    err = proc.stderr.decode()
    assert proc.returncode != 0 and proc.stdout == b""
    assert err.startswith("git gasp: error: ") and message in err and err.count("\n") == 1


def test_account_of_the_shipped_fixture():
    """The worked example alone (no run node: the run is its events): its goal through
    run.started's cause, the patch's commit, the eval, the decision's reason from its
    domain event."""
    events = parse_log((REPO_ROOT / "fixture/state/events.jsonl").read_bytes()).events
    graph = fold(events).graph
    assert run_ids(graph, events) == ["run_42"]
    (rec,) = recap_runs(graph, events, ["run_42"])
    assert rec.goal.id == "goal_retry" and rec.goal.text == "Make retry reliable"
    assert [(p.text, p.extra["commit"]) for p in rec.patches] == [
        ("persist retry counter", "abc1234")]
    assert rec.eval_outcomes() == [("cargo test retry", ["Passed"])]
    assert [(d.status, d.text) for d in rec.decisions] == [("Approved", "eval passed; promote")]
    md = render.markdown(rec)
    assert "- persist retry counter [Promoted], commit `abc1234`" in md
    assert render.markdown(rec) == md  # deterministic


def test_outcomes_reads_in_order():
    assert render.outcomes(["Failed", "Failed", "Passed"]) == "Failed ×2, then Passed"
    assert render.outcomes(["Passed"]) == "Passed"
