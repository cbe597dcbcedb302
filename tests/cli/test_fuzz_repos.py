"""Generated repositories, hostile where a collaborator can be: committed agent settings
(`.claude/settings.json`, `.mcp.json`, `.codex/config.toml`) of hostile shapes and
atoms (nesting past any stack, numbers past every limit, wrong types, bytes that are
not UTF-8), identity files of any name, a pinned patch at any int64 time. `export
agent-trace`, `doctor`, `adapt … install --mcp` (the agent settings readers) and the
MCP server's start-up (initialize, list and read the resources) exit 0, 1 or 2 only,
never an internal error; a refused install writes nothing."""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.testing.repos import copy_repo
from tests.testing.run import commit_all, gasp, git

ATOMS = [
    "9" * 5000, "-" + "9" * 4301, "1e99999", "NaN", "Infinity", "null", "true", '""', "[]",
    "{}", '"x"', "[" * 3000 + "]" * 3000, '{"a":' * 2000 + "1" + "}" * 2000,
    "[" * 150 + "]" * 150, '"\\ud800"', '"\\u0000"', "{]", '"git gasp mcp"',
    '["git", "gasp", "adapt", "hook"]', '{"command": "git gasp mcp", "args": []}',
    '{"PreToolUse": [{"hooks": [{"type": "command", "command": 5}]}]}',
    '{"PreToolUse": {"x": 1}}', '{"gasp": {"command": "evil"}}',
]
TOML_ATOMS = [
    "9" * 5000, "1e99999", "nan", "inf", "true", '"x"', "[]", "{}", "[" * 3000 + "]" * 3000,
    "[" * 150 + "]" * 150, '"""', "'", '{ command = "git", args = ["gasp", "mcp"] }',
    '{ command = 5 }', '"\\ud800"', "1979-05-27T07:32:00Z", "0x" + "f" * 5000,
]
json_atom = st.one_of(st.sampled_from(ATOMS), st.text(max_size=20).map(json.dumps))
toml_atom = st.one_of(st.sampled_from(TOML_ATOMS), st.text(max_size=20).map(json.dumps))
JSON_SHAPES = ['{{"hooks": {0}, "permissions": {1}}}', '{{"mcpServers": {{"gasp": {0}, '
               '"other": {1}}}}}', '{{"mcpServers": {0}}}', "{0}", '[{0}, {1}]']
TOML_SHAPES = ["[mcp_servers.gasp]\ncommand = {0}\nargs = {1}\n", "mcp_servers = {0}\n",
               "[mcp_servers]\ngasp = {0}\n", "a = {0}\n[b]\nc = {1}\n"]
json_text = st.one_of(
    st.builds(lambda f, a, b: f.format(a, b), st.sampled_from(JSON_SHAPES), json_atom,
              json_atom).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.binary(max_size=200))
toml_text = st.one_of(
    st.builds(lambda f, a, b: f.format(a, b), st.sampled_from(TOML_SHAPES), toml_atom,
              toml_atom).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.binary(max_size=200))
file_name = st.one_of(
    st.sampled_from([b"notes{x}.md", b"{a}", b"100%.md", b"q?x#y", b"a b", b"\xff.md",
                     b"%7B.md", b"..md", b"-", b"*"]),
    st.binary(min_size=1, max_size=20).filter(
        lambda b: b"/" not in b and b"\0" not in b and b not in (b".", b"..")))
INT64 = st.integers(-(2**63), 2**63 - 1)
REPOS = settings(max_examples=20, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                        HealthCheck.function_scoped_fixture])
MCP_TALK = b"".join(json.dumps(m).encode() + b"\n" for m in [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "fuzz", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "resources/list"}])


def clean_exit(proc: subprocess.CompletedProcess) -> None:
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode in (0, 1, 2), f"exit {proc.returncode}: {err[-600:]}"
    assert "internal error" not in err and "Traceback" not in err, err[-600:]


def tree(repo: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(repo.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(repo).parts}


def build(repo: Path, claude: bytes, mcp: bytes, codex: bytes, name: bytes,
          ts_ms: int) -> None:
    for rel, data in ((".claude/settings.json", claude), (".mcp.json", mcp),
                      (".codex/config.toml", codex)):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_bytes(data)
    with open(os.path.join(os.fsencode(repo), b"identity", name), "wb") as fh:
        fh.write(b"who I am\n")
    sha = commit_all(repo, "settings")
    goal = gasp(repo, "record", "goal", "--title", "g").stdout.decode().strip()
    assert gasp(repo, "record", "patch", "--title", "p", "--commit", sha,
                "--advances", goal).returncode == 0
    log = repo / "state/events.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    lines[-2:] = [re.sub(rb'"ts_ms":-?\d+', b'"ts_ms":%d' % ts_ms, x) for x in lines[-2:]]
    log.write_bytes(b"".join(lines))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "the patch")


@pytest.mark.slow  # hypothesis, and a repository per example
@REPOS
@given(json_text, json_text, toml_text, file_name, INT64)
def test_readers_of_a_generated_repository_exit_0_1_or_2(agent_template, tmp_path_factory,
                                                          claude, mcp, codex, name, ts_ms):
    repo = copy_repo(agent_template, tmp_path_factory.mktemp("fuzz") / "agent")
    build(repo, claude, mcp, codex, name, ts_ms)
    clean_exit(gasp(repo, "export", "agent-trace"))
    clean_exit(gasp(repo, "doctor"))
    for agent in ("claude-code", "codex"):
        before = tree(repo)
        proc = gasp(repo, "adapt", agent, "install", "--mcp")
        clean_exit(proc)
        if proc.returncode:
            after = tree(repo)
            changed = sorted(k for k in before.keys() | after.keys()
                             if before.get(k) != after.get(k))
            assert not changed, (agent, proc.stderr.decode()[-300:], changed)
    proc, answers = talk_mcp(repo)
    clean_exit(proc)
    if proc.returncode == 0:
        assert [a.get("id") for a in answers] == [1, 2] and "result" in answers[1], answers


def talk_mcp(repo: Path) -> tuple[subprocess.CompletedProcess, list[dict]]:
    """Start `git gasp mcp`, initialize and list the resources; stdin is closed once both
    are answered, the server ended, or a minute passed (so a server that neither answers
    nor ends fails the test instead of hanging it), and the server ends at EOF."""
    with subprocess.Popen(["git", "gasp", "mcp"], cwd=repo, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as server:
        lines: queue.Queue[bytes] = queue.Queue()
        reader = threading.Thread(target=lambda: [lines.put(x) for x in server.stdout],
                                  daemon=True)
        reader.start()
        server.stdin.write(MCP_TALK)
        server.stdin.flush()
        answers: list[dict] = []
        deadline = time.monotonic() + 60
        while len(answers) < 2 and server.poll() is None and time.monotonic() < deadline:
            try:
                answers.append(json.loads(lines.get(timeout=0.1)))
            except queue.Empty:
                continue
        server.stdin.close()
        try:
            code = server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            code = server.wait()
        reader.join(timeout=10)
        while not lines.empty() and len(answers) < 2:
            answers.append(json.loads(lines.get()))
        err = server.stderr.read()
    return subprocess.CompletedProcess(server.args, code, b"", err), answers
