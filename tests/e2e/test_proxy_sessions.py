"""Live agents through `git gasp proxy` (rung 3) against the scripted models.

Aider (PyPI ``aider-chat``, pinned in ``agents.AIDER_PKG``; no hooks, no transcript
git-gasp reads) fixes a bug through the proxy in front of the scripted OpenAI-compatible
model: the proxy alone must leave a conformant, committed run holding its model calls
(model, tokens) and the commit Aider made as a patch pinned to it. And Claude Code, its
hooks installed, through the proxy in front of the scripted Anthropic model: the
proxy's run and the hooks' run of the same session hold the same tool calls (name,
stored input, tool_use id, success). Without the package (no registry, no npm) a test
skips, saying why.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
from contextlib import contextmanager
from pathlib import Path

import pytest

from git_gasp.runtime import AgentState
from tests.e2e import agents
from tests.e2e.servers import (
    AIDER_COMMIT,
    BUGGY,
    FIXED,
    ChatHandler,
    ModelServer,
    aider_whole_file,
)
from tests.e2e.test_live_sessions import claude_bin  # noqa: F401 - a fixture
from tests.testing.run import drained, gasp, git, git_gasp_exe, out

pytestmark = pytest.mark.slow  # live agent sessions


@pytest.fixture(scope="session")
def aider_venv() -> Path:
    venv, why = agents.pip_install(agents.AIDER_PKG)
    if venv is None:
        pytest.skip(f"end-to-end test needs {agents.AIDER_PKG}: {why}")
    return venv


@contextmanager
def proxy(repo: Path, *upstreams: str):
    """`git-gasp proxy --port 0` in `repo` sending each API=URL of `upstreams` there;
    yields (its URL, a list that gets (stdout, stderr) once it stopped on SIGINT)."""
    argv = [*git_gasp_exe(), "proxy", "--port", "0"]
    for up in upstreams:
        argv += ["--upstream", up]
    proc = subprocess.Popen(argv, cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    ended: list = []
    try:
        line = proc.stderr.readline().decode()
        found = re.search(r"listening on (http://127\.0\.0\.1:\d+)", line)
        assert found, line
        yield found.group(1), ended
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr.decode()[-2000:]
        ended.append((stdout.decode(), stderr.decode()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _domain(repo: Path) -> list:
    with AgentState.open(repo) as st:
        return st.events()


def test_aider_through_the_proxy_records_its_model_calls_and_commit(aider_venv, agent,
                                                                    tmp_path):
    (agent / "calc.py").write_text(BUGGY)
    git(agent, "add", "calc.py")
    git(agent, "commit", "-qm", "calc with a bug", "--no-verify")
    with ModelServer(ChatHandler, [], str(agent), aider_whole_file) as server:
        with proxy(agent, f"openai=http://127.0.0.1:{server.port}") as (url, ended):
            proc = agents.run_aider(aider_venv, agent, tmp_path / "home", url + "/v1")
        requests = list(server.requests)
    session = f"aider exited {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    assert proc.returncode == 0, session
    assert (agent / "calc.py").read_text() == FIXED, session
    assert len(requests) >= 2, requests  # the edit, then the commit message
    (stdout, _stderr), = ended
    assert re.search(r"run_proxy\.\S+ finished \(patched\), committed", stdout), stdout

    aider_commit = git(agent, "log", "--format=%H %s", "-n", "5").splitlines()
    sha = next(line.split()[0] for line in aider_commit if line.endswith(AIDER_COMMIT))
    events = _domain(agent)
    by_kind: dict[str, list] = {}
    for e in events:
        by_kind.setdefault(e.kind, []).append(e)
    calls = [e.payload for e in by_kind["model.called"]]
    assert len(calls) == len(requests), (calls, requests)
    assert {c["model"] for c in calls} == {"gpt-test"}
    assert all(c["provider"] == "openai" and c["metadata"]["api"] == "openai-chat" for c in calls)
    finished = {e.id for e in by_kind["model.finished"]}
    usage = [op["UpdateNode"]["props"]["usage"] for e in by_kind["state.ops_applied"]
             if e.causation_id in finished for op in e.payload
             if "usage" in op.get("UpdateNode", {}).get("props", {})]
    assert len(usage) == len(calls) and all(u["prompt_tokens"] > 100 and
                                            u["completion_tokens"] == 20 for u in usage)
    (patch,) = [e.payload for e in by_kind["patch.proposed"]]
    assert patch["references_commit"] == sha and patch["title"] == AIDER_COMMIT
    assert patch["metadata"]["files"] == ["calc.py"]
    pinned = [op["AttachArtifact"]["artifact"] for e in by_kind["state.ops_applied"]
              for op in e.payload if "AttachArtifact" in op]
    assert {"kind": "git_commit", "uri": f"git:{sha}"}.items() <= pinned[0].items()
    (goal,) = by_kind["goal.created"]
    assert goal.payload["title"].startswith("Fix the add function")
    (run_end,) = [e.payload for e in by_kind["run.finished"]]
    assert run_end["outcome"] == "patched"
    head = git(agent, "log", "-1", "--format=%s%n%b")
    assert head.startswith(f"run {run_end['run_id']}: patched"), head
    check = gasp(agent, "check")
    assert check.returncode == 0, out(check)
    log = (agent / "state" / "events.jsonl").read_text()
    assert "sk-test-not-a-real-key" not in log
    assert json.loads(log.splitlines()[-1])["kind"] in ("run.finished", "state.ops_applied")


def _calls_by_run(events: list) -> dict[str, list[tuple]]:
    """run id -> its tool calls in order: (tool, stored input, tool_use id, success)."""
    done = {e.payload["id"]: e.payload["success"] for e in events if e.kind == "tool.finished"}
    out: dict[str, list[tuple]] = {}
    for e in events:
        if e.kind == "tool.called":
            p = e.payload
            out.setdefault(p["run_id"], []).append(
                (p["tool"], p["input_summary"], p["metadata"]["source"]["key"],
                 done.get(p["id"])))
    return out


def test_claude_code_through_the_proxy_records_the_tool_calls_its_hooks_record(
        claude_bin, tmp_path):  # noqa: F811 - the fixture imported above
    proc = gasp(tmp_path, "init", "bot")
    assert proc.returncode == 0, out(proc)
    repo = tmp_path / "bot"
    proc = gasp(repo, "adapt", "claude-code", "install")
    assert proc.returncode == 0, out(proc)
    ended: list = []

    @contextmanager
    def via(model_url: str):
        with proxy(repo, f"anthropic={model_url}") as (url, stopped):
            yield url
        ended.extend(stopped)

    home = tmp_path / "home"
    home.mkdir()
    session = agents.run_claude(claude_bin, repo, home, through=via)
    assert session.proc.returncode == 0, session.describe()
    drained(repo)
    assert ended and "run_proxy." in ended[0][0], ended
    check = gasp(repo, "check")
    assert check.returncode == 0, out(check)
    by_run = _calls_by_run(_domain(repo))
    hooks = [r for r in by_run if r.startswith("run_claude-code.")]
    proxied = [r for r in by_run if r.startswith("run_proxy.")]
    assert len(hooks) == 1 and len(proxied) == 1, by_run
    # the proxy's session is the one Claude Code names in X-Claude-Code-Session-Id
    assert proxied[0][len("run_proxy."):] == hooks[0][len("run_claude-code."):]
    assert len(by_run[hooks[0]]) == 6
    assert by_run[proxied[0]] == by_run[hooks[0]]
