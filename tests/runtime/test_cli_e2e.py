"""End to end through the installed `git gasp`: the "done when" script, restore, fork,
diff, memory, journal, identity amend, commit-run."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.runtime.helpers import assert_conformant, one_error_line
from tests.testing.run import gasp, git, out

pytestmark = pytest.mark.slow  # the CLI end to end

SCRIPT = Path(__file__).with_name("self_improvement_run.sh")


def ok(repo: Path, *args: str) -> str:
    proc = gasp(repo, *args)
    assert proc.returncode == 0, out(proc)
    return proc.stdout.decode()


@pytest.fixture
def driven(agent) -> tuple[Path, dict]:
    proc = subprocess.run(["bash", str(SCRIPT)], cwd=agent, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ids = dict(kv.split("=", 1) for kv in proc.stdout.split()[-7:])
    return agent, ids


def test_done_when_script_and_restore_elsewhere(driven, tmp_path):
    repo, ids = driven
    assert_conformant(repo)
    assert git(repo, "status", "--porcelain") == ""
    msg = git(repo, "log", "-1", "--format=%B")
    assert msg.startswith(f"run {ids['run']}: promoted\n")
    assert f"Run-Id: {ids['run']}\nGoal: {ids['goal']}\nOutcome: promoted" in msg
    graph = json.loads(ok(repo, "fold", "--json"))
    assert graph["nodes"][ids["patch"]]["props"]["status"] == "Promoted"
    lineage_here = ok(repo, "lineage", ids["patch"], "--json")
    assert {"from": ids["patch"], "rel": "validated_by", "to": ids["eval"], "props": {}} in \
        json.loads(lineage_here)["edges"]
    assert "—approved_by→" in ok(repo, "lineage", ids["patch"])
    assert "## " + ids["run"] in (repo / "journal/JOURNAL.md").read_text()

    dest = tmp_path / "elsewhere"
    text = ok(tmp_path, "restore", str(repo), str(dest), "--model", "gpt-next")
    assert "open goals (2):" in text and ids["goal"] in text and ids["second"] in text
    assert "unfinished run: none" in text and ids["decision"] in text
    assert "model: gpt-next" in text
    assert ok(dest, "lineage", ids["patch"], "--json") == lineage_here
    assert json.loads(ok(dest, "fold", "--json")) == graph
    # binding the model touched .agent/config.toml only
    assert git(dest, "status", "--porcelain").split() == ["M", ".agent/config.toml"]
    assert 'model = "gpt-next"' in (dest / ".agent/config.toml").read_text()
    assert_conformant(dest)


def test_restore_reports_an_unfinished_run_and_refuses_a_bad_identity(agent, tmp_path):
    goal = ok(agent, "record", "goal", "--title", "g").strip()
    run = ok(agent, "run", "start", "--task", "half done", "--goal", goal).strip()
    git(agent, "add", "-A")
    git(agent, "commit", "-q", "-m", "mid-run")
    text = ok(tmp_path, "restore", str(agent), str(tmp_path / "a"))
    assert f"unfinished run: {run}  half done" in text
    (agent / "identity/IDENTITY.md").write_text("tampered\n")
    git(agent, "commit", "-q", "--no-verify", "-am", "tamper")  # past the guard
    line = one_error_line(gasp(tmp_path, "restore", str(agent), str(tmp_path / "b")))
    assert "identity_hash" in line


def test_restore_at_an_event(driven, tmp_path):
    repo, ids = driven
    first = json.loads(ok(repo, "log", "--json", "--ops").splitlines()[1])["id"]
    text = ok(tmp_path, "restore", str(repo), str(tmp_path / "r"), "--at", first)
    assert "open goals (1):" in text and ids["goal"] in text and ids["second"] not in text


def test_fork_and_diff(driven):
    repo, ids = driven
    events = [json.loads(x) for x in ok(repo, "log", "--json", "--ops").splitlines()]
    at = next(e["id"] for e in events if e["kind"] == "state.ops_applied"
              and e["payload"][0]["CreateNode"]["id"] == ids["patch"])
    out_text = ok(repo, "fork", "experiment", "--at", at)
    assert out_text.startswith("experiment ")
    git(repo, "switch", "-q", "experiment")
    assert_conformant(repo)
    props = json.loads(ok(repo, "fold", "--json"))["nodes"][ids["patch"]]["props"]
    assert props["status"] == "Proposed"  # the fork is before the decision
    ok(repo, "record", "eval", "--command", "cargo test", "--status", "Failed",
       "--validates", ids["patch"])
    ok(repo, "record", "decision", "--status", "Rejected", "--reason", "B arm fails",
       "--patch", ids["patch"])
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "B arm")
    assert_conformant(repo)
    diff = json.loads(ok(repo, "diff", "main", "experiment", "--json"))
    change = diff["nodes_changed"][ids["patch"]]["props.status"]
    assert change == {"a": "Promoted", "b": "Rejected"}
    assert any(r["rel"] == "rejected_by" for r in diff["relations_added"])
    assert any(r["rel"] == "approved_by" for r in diff["relations_removed"])
    assert "props.status" in ok(repo, "diff", "main", "experiment")
    line = one_error_line(gasp(repo, "fork", "experiment"))
    assert "already exists" in line


def test_memory_journal_and_identity_amend(driven):
    repo, ids = driven
    fact = ok(repo, "memory", "add", "retry_timeout is flaky; ignore single failures",
              "--from", ids["run"]).strip()
    assert fact.startswith("fact_")
    assert "derived_from" in one_error_line(gasp(repo, "memory", "add", "x", "--from", "nope"))
    newer = ok(repo, "memory", "supersede", fact, "retry_timeout is fixed",
               "--from", ids["eval"]).strip()
    assert "already superseded" in one_error_line(
        gasp(repo, "memory", "supersede", fact, "again", "--from", ids["run"]))
    assert ok(repo, "memory", "list").split() == [newer, "retry_timeout", "is", "fixed"]
    assert len(ok(repo, "memory", "list", "--all").splitlines()) == 2
    ok(repo, "memory", "synthesize")
    active = (repo / "memory/active_memory.md").read_text()
    assert "retry_timeout is fixed" in active and "flaky" not in active
    lines = (repo / "memory/facts.jsonl").read_text().splitlines()
    assert list(json.loads(lines[1])) == ["id", "ts_ms", "text", "derived_from", "supersedes"]
    assert json.loads(lines[1])["supersedes"] == fact

    journal = (repo / "journal/JOURNAL.md").read_bytes()
    assert ok(repo, "journal").startswith("appended 0 run(s)")
    ok(repo, "run", "start", "--task", "second run")
    ok(repo, "run", "finish", "--outcome", "nothing to do")
    ok(repo, "journal")
    assert (repo / "journal/JOURNAL.md").read_bytes().startswith(journal)  # appended only
    ok(repo, "commit-run", "--no-journal")
    assert_conformant(repo)

    before = ok(repo, "identity", "hash").strip()
    assert ok(repo, "identity", "verify").strip() == f"identity ok: {before}"
    (repo / "new.md").write_text("# Identity\n\nI am careful.\n")
    head = git(repo, "rev-parse", "HEAD").strip()
    text = ok(repo, "identity", "amend", "--approved-by", "Jane Doe",
              "--reason", "be careful", "--set", "identity/IDENTITY.md=new.md")
    assert git(repo, "rev-list", "--count", f"{head}..HEAD").strip() == "1"  # ONE commit
    changed = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(changed) == ["AGENT.md", "identity/IDENTITY.md", "state/events.jsonl"]
    after = ok(repo, "identity", "hash").strip()
    assert after != before and after in (repo / "AGENT.md").read_text()
    assert after[:12] in text
    last = json.loads(ok(repo, "log", "--json", "--kind", "decision.created").splitlines()[-1])
    assert last["actor"] == {"kind": "user", "id": "Jane Doe"}
    assert last["payload"]["reason"] == "be careful"
    assert "unchanged" in one_error_line(gasp(repo, "identity", "amend", "--approved-by", "J",
                                              "--reason", "r"))
    assert_conformant(repo)


def test_commit_run_refusals(driven):
    repo, ids = driven
    ok(repo, "run", "start", "--task", "t")
    assert "still open" in one_error_line(gasp(repo, "commit-run"))
    ok(repo, "run", "finish", "--outcome", "fine")
    assert "one line" in one_error_line(gasp(repo, "commit-run", "--outcome", "a\nb"))
    (repo / "state/events.jsonl").unlink()
    line = one_error_line(gasp(repo, "commit-run", "--run", ids["run"]))
    assert "state/events.jsonl" in line
    git(repo, "checkout", "--", "state/events.jsonl")


def test_record_json_payload_and_log_filters(agent):
    goal = ok(agent, "record", "goal", "--json",
              '{"title": "from json", "metadata": {"k": "v"}}').strip()
    bad = gasp(agent, "record", "goal", "--json", '{"titel": "x"}')
    assert bad.returncode == 2 and b"unknown field titel" in bad.stderr
    assert "missing --title" in " ".join(out(gasp(agent, "record", "goal")).split())
    run = ok(agent, "run", "start", "--task", "t", "--goal", goal).strip()
    ok(agent, "record", "observation", "--summary", "seen", "--about", goal)
    ok(agent, "run", "finish", "--outcome", "done")
    kinds = [ln.split()[3] for ln in ok(agent, "log", "--reverse", "--run", run).splitlines()]
    assert kinds == ["run.started", "observation.created", "run.finished"]
    assert len(ok(agent, "log", "--kind", "goal.*").splitlines()) == 1
    assert_conformant(agent)
