"""A project with known authorship for `stats` and `report` (tests/stats): its state on
the `gasp/state` branch (`init --branch`), so the project's tree holds only its own
files. Two agents (claude-code, codex) on two models, human commits around them, a
patch rejected, an eval failed, and a commit another tool wrote (an imported Agent
Trace record).

The tree at `tip` (line counts exact):

- ``app.py`` 10 lines: 4 human (base), 3 claude-code/opus (run 1), 3 codex/gpt (run 2)
- ``util.py`` 5 lines: 2 claude-code/opus (run 1, an earlier commit of its change),
  3 human (Bo's edit after it)
- ``notes.md`` 4 lines: 2 cursor/gpt-4o (the Agent Trace record), 2 human
- ``README`` 3 lines: human
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from git_gasp.runtime import AgentState
from git_gasp.store.location import require_root
from tests.testing.blame_history import write
from tests.testing.hermetic import isolate
from tests.testing.run import gasp, git, out

OPUS, GPT = "claude-opus-4-5", "gpt-5"


@dataclass
class Project:
    repo: Path
    state: Path
    base: str  # the human base commit
    tip: str
    runs: dict[str, str]  # "claude" / "codex" -> run id
    patches: dict[str, str]
    goals: dict[str, str]
    evals: dict[str, str]
    decisions: dict[str, str]


def _commit_as(repo: Path, who: str, message: str, *paths: str, when: int | None = None
               ) -> str:
    """Commit `paths` as `who`, dated `when` (epoch seconds; default the hermetic date,
    before any run): a run's change holds its commits made since it started."""
    git(repo, "add", "--", *paths)
    env = dict(os.environ, GIT_AUTHOR_NAME=who, GIT_COMMITTER_NAME=who,
               GIT_AUTHOR_EMAIL=f"{who.lower()}@example.com",
               GIT_COMMITTER_EMAIL=f"{who.lower()}@example.com")
    if when is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"{when} +0000"
    subprocess.run(["git", "commit", "-q", "--no-verify", "-m", message, "--", *paths],
                   cwd=repo, env=env, check=True, capture_output=True)
    return git(repo, "rev-parse", "HEAD").strip()


def _run(state: Path, agent: str, model: str, task: str, goal_title: str, calls: int,
         tokens: int):
    st = AgentState.open(state, "stats-test")
    goal = st.record_goal(goal_title)
    run = st.start_run(task, goal=goal, metadata={"source": {"agent": agent},
                                                  "person": "Ann"})
    for i in range(calls):
        call = st.record_model_call(model, provider="test", input_summary=f"step {i}")
        st.finish_model_call(call, output_summary="ok",
                             usage={"input_tokens": tokens, "output_tokens": 10})
        tool = st.record_tool_call("Edit", input_summary="edit")
        st.finish_tool_call(tool, output_summary="done")
    return st, goal, run


def _close(st, title: str, goal: str, commit: str, check: tuple[str, str],
           verdict: tuple[str, str], outcome: str) -> tuple[str, str, str]:
    """The run's patch pinning `commit`, its eval and the decision; the run finished."""
    patch = st.propose_patch(title, advances=goal, commit=commit)
    ev = st.record_eval(check[0], check[1], validates=patch)
    decision = st.record_decision(verdict[0], verdict[1], patch=patch)
    st.finish_run(outcome)
    st.close()
    return patch, ev, decision


def build_isolated(tmp_path_factory: pytest.TempPathFactory, name: str) -> Project:
    """`build` for a module-scoped fixture: those run before the autouse `hermetic`
    fixture, so this one isolates HOME, git config and PATH itself while it builds."""
    with pytest.MonkeyPatch.context() as mp:
        isolate(mp, tmp_path_factory.mktemp(f"{name}-home"))
        return build(tmp_path_factory.mktemp(name))


def build(tmp: Path) -> Project:
    repo = tmp / "proj"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, "app.py", b"import os\n\n\ndef main():\n")
    write(repo, "README", b"proj\n====\na project\n")
    base = _commit_as(repo, "Ann", "human: start", "app.py", "README")
    proc = gasp(repo, "init", "--branch")
    assert proc.returncode == 0, out(proc)
    state = Path(require_root(str(repo)))
    runs, patches, goals, evals, decisions = {}, {}, {}, {}, {}

    # run 1: claude-code on opus, two commits (util.py, then app.py), one patch on the last
    st, goals["claude"], runs["claude"] = _run(state, "claude-code", OPUS, "add util",
                                               "Helpers", 2, 100)
    later = int(time.time()) + 2  # after the run started
    write(repo, "util.py", b"def a():\n    return 1\n")
    _commit_as(repo, "Ann", "agent: util", "util.py", when=later)
    write(repo, "app.py", b"import os\n\n\ndef main():\n    x = 1\n    y = 2\n    return x\n")
    first = _commit_as(repo, "Ann", "agent: main body", "app.py", when=later)
    patches["claude"], evals["claude"], decisions["claude"] = _close(
        st, "main body", goals["claude"], first, ("pytest", "Passed"),
        ("Approved", "tests pass"), "completed")

    # Bo, a person, extends util.py
    write(repo, "util.py", b"def a():\n    return 1\n# by Bo\ndef b():\n    return 2\n")
    _commit_as(repo, "Bo", "human: b()", "util.py")

    # run 2: codex on gpt-5, one commit to app.py; its eval fails and the patch is rejected
    st, goals["codex"], runs["codex"] = _run(state, "codex", GPT, "add cli", "CLI", 1, 50)
    write(repo, "app.py", (repo / "app.py").read_bytes() + b"\n\nmain()\n")
    second = _commit_as(repo, "Ann", "agent: call main", "app.py", when=later + 1)
    patches["codex"], evals["codex"], decisions["codex"] = _close(
        st, "call main", goals["codex"], second, ("ruff", "Failed"),
        ("Rejected", "lint fails"), "failed")

    # another tool's commit, described by an Agent Trace record
    write(repo, "notes.md", b"human\ncursor one\ncursor two\nhuman again\n")
    tool_commit = _commit_as(repo, "Cy", "notes from cursor", "notes.md", when=later + 2)
    record = {"version": "1.0", "id": "trace-1", "timestamp": "2026-01-23T14:30:00Z",
              "tool": {"name": "cursor"}, "vcs": {"type": "git", "revision": tool_commit},
              "files": [{"path": "notes.md", "conversations": [{
                  "contributor": {"type": "ai", "model_id": "openai/gpt-4o"},
                  "ranges": [{"start_line": 2, "end_line": 3}]}]}]}
    (tmp / "trace.jsonl").write_text(json.dumps(record) + "\n")
    proc = gasp(repo, "import", "agent-trace", str(tmp / "trace.jsonl"))
    assert proc.returncode == 0, out(proc)
    tip = git(repo, "rev-parse", "HEAD").strip()
    return Project(repo, state, base, tip, runs, patches, goals, evals, decisions)
