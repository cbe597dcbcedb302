"""`git gasp mcp` over stdio, driven by the official SDK's client as an agent would:
the tools listed with their schemas, each called, refusals and bad arguments answered
as one-line tool errors while the server goes on serving, events appended after start
followed, the write tools behind `[mcp] write = true` and the CLI's write gate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_gasp.store.lease import Lease
from tests.mcp.client import drive, ok, refused
from tests.testing.run import commit_all, gasp, git, out

pytestmark = pytest.mark.slow  # a server process per test, driven through the MCP SDK

READ_TOOLS = {"gasp_search", "gasp_lineage", "gasp_recall", "gasp_ready"}
WRITE_TOOLS = {"gasp_remember", "gasp_observe", "gasp_decide"}
SECRET = "sk-ant-api03-" + "Qx7Lm2Vb9Nc4Zr8Tp1Ws6Yd3Kf5Hg0Jj-AA"  # a key the agent saw


def record(repo: Path, *args: str) -> str:
    proc = gasp(repo, "record", *args)
    assert proc.returncode == 0, out(proc)
    return proc.stdout.decode().strip()


def log_lines(repo: Path) -> list[dict]:
    return [json.loads(line) for line in (repo / "state/events.jsonl").read_bytes().splitlines()]


def enable_writes(repo: Path, extra: str = "") -> None:
    config = repo / ".agent/config.toml"
    config.write_bytes(config.read_bytes() + f"\n[mcp]\nwrite = true\nwait = 0\n{extra}".encode())


def history(repo: Path) -> dict[str, str]:
    """A goal, three tasks serving it, a patch advancing it, an eval validating the
    patch, a fact learned from the eval (and active_memory.md synthesized)."""
    goal = record(repo, "goal", "--title", "Speed up the parser")
    task = record(repo, "task", "--title", "Profile the tokenizer", "--goal", goal)
    blocker = record(repo, "task", "--title", "Wait for the new grammar", "--goal", goal)
    held = record(repo, "task", "--title", "Rewrite the lexer", "--goal", goal)
    patch = record(repo, "patch", "--title", "Cache token tables", "--advances", goal)
    ev = record(repo, "eval", "--command", "pytest -q", "--status", "Passed",
                "--validates", patch)
    proc = gasp(repo, "memory", "add", "The tokenizer spends its time in regex compiles",
                "--from", ev)
    assert proc.returncode == 0, out(proc)
    assert gasp(repo, "memory", "synthesize").returncode == 0
    return {"goal": goal, "task": task, "blocker": blocker, "held": held, "patch": patch,
            "eval": ev}


def test_tools_listed_called_and_refused_without_crashing(agent, tmp_path):
    ids = history(agent)

    async def body(s):
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert set(tools) == READ_TOOLS  # no knowledge graph, writes not enabled
        schema = tools["gasp_search"].input_schema
        assert schema["required"] == ["query"] and set(schema["properties"]) == {
            "query", "kinds", "status", "limit", "run", "agent", "person", "since_ms"}
        assert tools["gasp_search"].output_schema["type"] == "object"
        found = ok(await s.call_tool("gasp_search", {"query": "TOKENIZER"}))
        assert [r["id"] for r in found["results"]] == [ids["task"]]
        goals = ok(await s.call_tool("gasp_search", {"query": "parser", "kinds": ["goal"],
                                                     "status": "open"}))
        assert [r["id"] for r in goals["results"]] == [ids["goal"]]
        lineage = ok(await s.call_tool("gasp_lineage", {"id": ids["patch"][:14]}))
        assert lineage["root"] == ids["patch"]
        linked = {n["id"] for n in lineage["nodes"]}
        assert {ids["goal"], ids["eval"]} <= linked
        rels = {(e["from"], e["rel"], e["to"]) for e in lineage["edges"]}
        assert (ids["patch"], "advances", ids["goal"]) in rels
        recalled = ok(await s.call_tool("gasp_recall", {"query": "regex"}))
        (fact,) = recalled["facts"]
        assert fact["id"].startswith("fact_") and fact["derived_from"] == [ids["eval"]]
        queue = ok(await s.call_tool("gasp_ready", {}))
        assert {r["id"] for r in queue["ready"]} == {ids["goal"], ids["task"],
                                                     ids["blocker"], ids["held"]}
        # a refusal: the write tools are not enabled here
        said = refused(await s.call_tool("gasp_remember", {
            "text": "x", "derived_from": [ids["goal"]]}))
        assert "[mcp] write = true" in said
        # bad arguments: unknown id, ambiguous prefix, wrong type, out of range
        assert "no node 'goal_nope'" in refused(
            await s.call_tool("gasp_lineage", {"id": "goal_nope"}))
        assert "ambiguous" in refused(await s.call_tool("gasp_lineage", {"id": "task_"}))
        assert "query" in refused(await s.call_tool("gasp_search", {"query": 3}))
        assert "limit" in refused(await s.call_tool("gasp_search", {"query": "x",
                                                                    "limit": 0}))
        assert "kind" in refused(await s.call_tool("gasp_search", {"query": "x",
                                                                   "kinds": ["nope"]}))
        assert "Unknown tool" in refused(await s.call_tool("no_such_tool", {}))
        # and the server still answers
        again = ok(await s.call_tool("gasp_search", {"query": "parser"}))
        assert again["results"]
        resources = {str(r.uri) for r in (await s.list_resources()).resources}
        assert resources == {"gasp://memory/active_memory.md",
                             "gasp://identity/IDENTITY.md"}
        identity = await s.read_resource("gasp://identity/IDENTITY.md")
        assert identity.contents[0].text.encode() == (agent / "identity/IDENTITY.md") \
            .read_bytes()
        memory = await s.read_resource("gasp://memory/active_memory.md")
        assert memory.contents[0].text.encode() == (agent / "memory/active_memory.md") \
            .read_bytes()
        assert "regex compiles" in memory.contents[0].text

    drive(agent, body, tmp_path / "err.log")
    assert "Traceback" not in (tmp_path / "err.log").read_text()


def test_follows_events_appended_after_it_started(agent, tmp_path):
    record(agent, "goal", "--title", "First goal")

    async def body(s):
        before = ok(await s.call_tool("gasp_search", {"query": "afterwards"}))
        assert before["results"] == []
        late = record(agent, "goal", "--title", "Added afterwards")  # while it serves
        after = ok(await s.call_tool("gasp_search", {"query": "afterwards"}))
        assert [r["id"] for r in after["results"]] == [late]
        ready = ok(await s.call_tool("gasp_ready", {}))
        assert late in {r["id"] for r in ready["ready"]}

    drive(agent, body, tmp_path / "err.log")


def test_write_tools_behind_the_write_gate(agent, tmp_path):
    goal = record(agent, "goal", "--title", "Ship the cache")
    patch = record(agent, "patch", "--title", "Add the cache", "--advances", goal)
    enable_writes(agent)
    lines = len(log_lines(agent))

    async def body(s):
        names = {t.name for t in (await s.list_tools()).tools}
        assert WRITE_TOOLS <= names
        seen = ok(await s.call_tool("gasp_observe", {"summary": "cache hit rate 93%",
                                                     "about": patch[:12]}))
        assert seen["id"].startswith("observation_") and seen["committed"] is None
        fact = ok(await s.call_tool("gasp_remember", {"text": f"Caching pays off {SECRET}",
                                                      "derived_from": [seen["id"][:16]]}))
        # the lease honoured: another worker holds it, the write is refused, nothing appended
        other = Lease(agent, "someone-else@elsewhere")
        other.ensure()
        try:
            held = refused(await s.call_tool("gasp_decide", {
                "status": "Approved", "reason": "fast", "patch": patch}))
            assert "someone-else" in held
        finally:
            other.release()
        decided = ok(await s.call_tool("gasp_decide", {"status": "Rejected",
                                                        "reason": "not yet", "patch": patch}))
        bad = refused(await s.call_tool("gasp_decide", {"status": "Maybe", "reason": "x"}))
        assert "Approved" in bad
        assert "derived_from" in refused(await s.call_tool("gasp_remember", {
            "text": "x", "derived_from": ["event_nope"]}))
        lineage = ok(await s.call_tool("gasp_lineage", {"id": patch}))
        statuses = {n["id"]: n["status"] for n in lineage["nodes"]}
        assert statuses[patch] == "Rejected"
        return seen["id"], fact["id"], decided["id"]

    observation, fact, decision = drive(agent, body, tmp_path / "err.log")
    events = log_lines(agent)
    kinds = [e["kind"] for e in events[lines:]]
    assert kinds == ["observation.created", "state.ops_applied", "decision.created",
                     "state.ops_applied"]  # appended only: the refused write left nothing
    assert events[lines]["payload"]["id"] == observation
    assert events[lines]["payload"]["source"] == "mcp"
    assert events[lines + 2]["payload"]["id"] == decision
    facts = [json.loads(x) for x in (agent / "memory/facts.jsonl").read_bytes().splitlines()]
    assert facts[-1]["id"] == fact and facts[-1]["derived_from"] == [observation]
    assert SECRET not in facts[-1]["text"] and "[REDACTED:" in facts[-1]["text"]
    assert not (agent / ".agent/lease").exists()  # given back after each write
    assert gasp(agent, "check").returncode == 0, out(gasp(agent, "check"))
    status = gasp(agent, "status", "--json")
    assert json.loads(status.stdout)["uncommitted"], "no commit unless configured"


def test_write_commits_only_when_configured(agent, tmp_path):
    goal = record(agent, "goal", "--title", "Commit me")
    enable_writes(agent, "commit = true\n")
    commit_all(agent, "the goal and the config")
    head = git(agent, "rev-parse", "HEAD").strip()

    async def body(s):
        return ok(await s.call_tool("gasp_observe", {"summary": "committed", "about": goal}))

    seen = drive(agent, body, tmp_path / "err.log")
    assert seen["committed"] and seen["committed"] != head
    assert git(agent, "rev-parse", "HEAD").strip() == seen["committed"]
    assert git(agent, "status", "--porcelain", "state/").strip() == ""


def test_a_log_damaged_while_serving_is_a_tool_error_then_it_recovers(agent, tmp_path):
    goal = record(agent, "goal", "--title", "Survive damage")
    log = agent / "state/events.jsonl"
    good = log.read_bytes()

    async def body(s):
        assert ok(await s.call_tool("gasp_search", {"query": "damage"}))["results"]
        log.write_bytes(good + b'{"not": "an event"}\n')
        said = refused(await s.call_tool("gasp_search", {"query": "damage"}))
        assert "events.jsonl" in said
        log.write_bytes(good)  # repaired
        found = ok(await s.call_tool("gasp_lineage", {"id": goal}))
        assert found["root"] == goal

    drive(agent, body, tmp_path / "err.log")
    assert "Traceback" not in (tmp_path / "err.log").read_text()
