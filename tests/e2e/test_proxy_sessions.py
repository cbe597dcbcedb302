"""Live agents through `git gasp proxy` (rung 3) against the scripted models.

Aider (PyPI ``aider-chat``, pinned in ``agents.AIDER_PKG``; no hooks, no transcript
git-gasp reads) fixes a bug through the proxy in front of the scripted OpenAI-compatible
model: the proxy alone must leave a conformant, committed run holding its model calls
(model, tokens) and the commit Aider made as a patch pinned to it. Without the package
(no registry) the test skips, saying why.
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
from tests.e2e.servers import AIDER_COMMIT, BUGGY, FIXED, ChatHandler, ModelServer
from tests.testing.run import gasp, git, git_gasp_exe, out

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
    with ModelServer(ChatHandler, [], str(agent)) as server:
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
    assert all(c["provider"] == "openai-chat" for c in calls)
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
