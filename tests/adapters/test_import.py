"""`git gasp import`: the real sessions become conformant, idempotent, redacted runs."""

from __future__ import annotations

import gzip
import json

import pytest

from tests.adapters.samples import CLAUDE_TRANSCRIPT, CODEX_ROLLOUT, read_jsonl, write_jsonl
from tests.testing.run import gasp, git, out

pytestmark = pytest.mark.slow  # real sessions imported through the CLI

SECRET = "sk-ant-api03-" + "Qx7Lm2Vb9Nc4Zr8Tp1Ws6Yd3Kf5Hg0Jj-AA"


@pytest.fixture
def agent_repo(tmp_path):
    proc = gasp(tmp_path, "init", "bot")
    assert proc.returncode == 0, out(proc)
    return tmp_path / "bot"


def _fold(repo):
    proc = gasp(repo, "fold", "--json")
    assert proc.returncode == 0, out(proc)
    return json.loads(proc.stdout)


@pytest.mark.parametrize(("agent", "path", "evals", "outcome"), [
    ("claude-code", CLAUDE_TRANSCRIPT, ["Failed", "Passed"], "promoted"),
    ("codex", CODEX_ROLLOUT, ["Failed", "Failed"], "patched"),
])
def test_import_is_conformant_committed_and_idempotent(agent_repo, agent, path, evals, outcome):
    proc = gasp(agent_repo, "import", agent, str(path))
    assert proc.returncode == 0, out(proc)
    assert outcome in out(proc) and "committed" in out(proc)
    check = gasp(agent_repo, "check")
    assert check.returncode == 0, out(check)
    assert git(agent_repo, "status", "--porcelain") == ""
    msg = git(agent_repo, "log", "-1", "--format=%B")
    assert f"Outcome: {outcome}" in msg and "Run-Id: run_" + agent in msg
    graph = _fold(agent_repo)
    nodes = graph["nodes"].values()
    kinds = sorted(n["kind"] for n in nodes)
    assert kinds.count("model_call") == 7 and kinds.count("tool_call") == 6
    assert sorted(n["props"]["status"] for n in nodes if n["kind"] == "eval") == sorted(evals)
    logged = [json.loads(line) for line in (agent_repo / "state/events.jsonl").open()]
    assert [e["payload"]["status"] for e in logged if e["kind"] == "eval.finished"] == evals
    lifted = [n for n in nodes if n["kind"] in ("goal", "eval", "failure", "patch", "decision")]
    assert all(n["props"]["metadata"]["lifted_by"] for n in lifted)
    run = next(n for n in nodes if n["kind"] == "run")
    archive = run["props"]["metadata"]["transcript"]
    assert run["artifacts"][0]["hash"] == archive["hash"]
    assert (agent_repo / archive["uri"]).exists()
    log = (agent_repo / "state/events.jsonl").read_bytes()
    again = gasp(agent_repo, "import", agent, str(path))
    assert again.returncode == 0 and "already imported" in out(again)
    assert (agent_repo / "state/events.jsonl").read_bytes() == log


def test_claude_import_builds_the_promoted_patch_lineage(agent_repo):
    assert gasp(agent_repo, "import", "claude-code", str(CLAUDE_TRANSCRIPT)).returncode == 0
    graph = _fold(agent_repo)
    nodes = graph["nodes"]
    rels = {(r["from"], r["rel"], r["to"]) for r in graph["relations"]}
    patch = next(n for n in nodes.values() if n["kind"] == "patch")
    assert patch["props"]["status"] == "Promoted"
    assert patch["props"]["references_commit"] == "25b87ee"
    by = {rel: nodes[dst] for src, rel, dst in rels if src == patch["id"] and dst in nodes}
    assert by["validated_by"]["props"]["status"] == "Passed"
    assert by["approved_by"]["kind"] == "decision" and by["advances"]["kind"] == "goal"
    assert by["addresses"]["kind"] == "failure"


def test_import_redacts_planted_secrets_everywhere(agent_repo, tmp_path):
    rows = read_jsonl(CODEX_ROLLOUT)
    for row in rows:
        p = row["payload"]
        if p.get("type") == "function_call_output":
            p["output"] = f"OPENAI_API_KEY leaked: {SECRET}\n" + p["output"]
    planted = write_jsonl(tmp_path / "rollout-planted.jsonl", rows)
    proc = gasp(agent_repo, "import", "codex", str(planted))
    assert proc.returncode == 0, out(proc)
    assert SECRET.encode() not in (agent_repo / "state/events.jsonl").read_bytes()
    assert b"[REDACTED:anthropic_key:" in (agent_repo / "state/events.jsonl").read_bytes()
    archive = next((agent_repo / "transcripts").glob("*.jsonl.gz"))
    assert SECRET.encode() not in gzip.decompress(archive.read_bytes())


def test_import_usage_errors_are_one_line(agent_repo, tmp_path):
    proc = gasp(agent_repo, "import", "codex")
    assert proc.returncode == 2 and "--all" in out(proc)
    proc = gasp(agent_repo, "import", "codex", str(tmp_path / "missing.jsonl"))
    assert proc.returncode != 0 and "Traceback" not in out(proc)
    assert len(out(proc).strip().splitlines()) == 1


def test_import_all_takes_only_this_projects_sessions(agent_repo, hermetic, monkeypatch):
    from tests.adapters.test_sessions import claude_session

    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    sibling = agent_repo.parent / (agent_repo.name + "-other")
    sibling.mkdir()
    claude_session(hermetic, sibling, "s-sibling")
    proc = gasp(agent_repo, "import", "claude-code", "--all")
    assert proc.returncode == 0, out(proc)
    store = hermetic / ".claude" / "projects"
    assert out(proc).strip() == f"no sessions found for {agent_repo.resolve()} in {store}"
    mine = claude_session(hermetic, agent_repo / "src", "s-mine")
    proc = gasp(agent_repo, "import", "claude-code", "--all")
    assert proc.returncode == 0, out(proc)
    assert str(mine) in out(proc) and "s-sibling" not in out(proc)
    runs = [n for n in _fold(agent_repo)["nodes"].values() if n["kind"] == "run"]
    assert [r["id"] for r in runs] == ["run_claude-code.s-mine"]


def test_import_all_with_no_codex_store_says_where_it_looked(agent_repo, hermetic, monkeypatch):
    monkeypatch.delenv("CODEX_HOME", raising=False)
    proc = gasp(agent_repo / "state", "import", "codex", "--all")
    assert proc.returncode == 0, out(proc)
    assert out(proc).strip() == (f"no sessions found for {agent_repo.resolve()} in "
                                 f"{hermetic / '.codex' / 'sessions'}")
