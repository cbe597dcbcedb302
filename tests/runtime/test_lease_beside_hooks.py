"""A writer that records into another worker's open run (the MCP server's write tools,
`git gasp record` in the agent's shell) gives the lease back when its write ends: a
hooked session's hooks are never locked out by it (`AgentState.settle_lease`)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from git_gasp.adapters.session_writer import run_id_for
from tests.adapters.samples import CLAUDE_HOOKS, read_jsonl
from tests.mcp.client import drive, ok
from tests.testing.run import gasp, git, out

SID = "6f48f32c-63b8-44c3-9f60-37aed18fbcf2"  # the sample session's id


def hook(repo: Path, row: dict) -> None:
    """One hook event, sent as Claude Code sends it (a short budget: a locked-out hook
    queues its payload quickly instead of waiting)."""
    env = dict(os.environ, GASP_HOOK_BUDGET="2")
    proc = subprocess.run(["git", "gasp", "adapt", "hook"], cwd=repo, capture_output=True,
                          input=json.dumps(dict(row, cwd=str(repo))).encode(), env=env)
    assert proc.returncode == 0 and proc.stdout == b"", out(proc)


def observe_over_mcp(repo: Path, summary: str, errlog: Path) -> None:
    async def body(s):
        return ok(await s.call_tool("gasp_observe", {"summary": summary}))

    assert drive(repo, body, errlog)["id"].startswith("observation_")


def observe_with_cli(repo: Path, summary: str, _errlog: Path) -> None:
    proc = gasp(repo, "record", "observation", "--summary", summary)
    assert proc.returncode == 0, out(proc)


def session_with_writes_between_tool_calls(repo: Path, write, errlog: Path) -> list[str]:
    """Replay the sample Claude Code session, `write` after every finished tool call;
    return the summaries written."""
    config = repo / ".agent/config.toml"
    config.write_bytes(config.read_bytes() + b"\n[mcp]\nwrite = true\nwait = 0\n")
    written = []
    for row in read_jsonl(CLAUDE_HOOKS):
        hook(repo, row)
        if row["hook_event_name"].startswith("PostToolUse"):
            summary = f"noted after tool call {len(written) + 1}"
            write(repo, summary, errlog)
            written.append(summary)
    return written


@pytest.mark.slow
@pytest.mark.parametrize("write", [observe_over_mcp, observe_with_cli], ids=["mcp", "cli"])
def test_writes_between_tool_calls_never_lock_the_hooks_out(agent, tmp_path, write):
    written = session_with_writes_between_tool_calls(agent, write, tmp_path / "mcp.err")
    gdir = Path(git(agent, "rev-parse", "--absolute-git-dir").strip())
    assert not list((gdir / "gasp" / "queue").glob("*.payload")), "payloads left queued"
    assert not (agent / ".agent/lease").exists()  # nobody holds it once the session ended
    run_id = run_id_for("claude-code", SID)
    # every payload recorded: the six tool calls, the run finished, committed at SessionEnd
    graph = json.loads(gasp(agent, "fold", "--json").stdout)
    nodes = graph["nodes"].values()
    assert sum(n["kind"] == "tool_call" for n in nodes) == 6
    assert graph["nodes"][run_id]["props"]["status"] == "finished"
    assert f"Run-Id: {run_id}" in git(agent, "log", "-1", "--format=%B")
    summaries = [n["props"]["summary"] for n in nodes if n["kind"] == "observation"]
    assert all(s in summaries for s in written) and len(written) == 6
    check = gasp(agent, "check")
    assert check.returncode == 0, out(check)
