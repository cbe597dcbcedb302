"""Real git histories for the attribution tests (tests/attribution): a human commit, an
agent commit pinned by a patch (with its run, model call, goal, eval and decision), a
later human edit of one of the agent's lines, and a rename."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from git_gasp.runtime import AgentState
from tests.testing.run import commit_all, git

HUMAN = b"def one():\n    return 1\n\n\ndef two():\n    return 2\n"
# the agent inserts three lines after line 3 (lines 4-6 in its commit)
AGENT = (b"def one():\n    return 1\n\n"
         b"def retry(n):\n    return [one() for _ in range(n)]\n# retried\n"
         b"\ndef two():\n    return 2\n")
# a human then rewrites the agent's second line (line 5)
EDITED = AGENT.replace(b"    return [one() for _ in range(n)]\n",
                       b"    return [one()] * n  # faster\n")


@dataclass
class History:
    repo: Path
    human: str
    agent: str
    edit: str
    rename: str
    goal: str
    run: str
    patch: str
    eval: str
    decision: str
    model_call: str


def write(repo: Path, rel: str, data: bytes) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def commit_paths(repo: Path, message: str, *paths: str) -> str:
    """Commit only `paths` (as an agent commits its code, the log apart)."""
    git(repo, "add", "--", *paths)
    git(repo, "commit", "-q", "--no-verify", "-m", message, "--", *paths)
    return git(repo, "rev-parse", "HEAD").strip()


def build(repo: Path) -> History:
    """The four commits in the agent repo `repo` (the project is the agent repository);
    the state's events committed after each step, as an agent would."""
    write(repo, "app.py", HUMAN)
    human = commit_all(repo, "human: one and two")
    with AgentState.open(repo, "agent-under-test") as st:
        goal = st.record_goal("Make retries reliable")
        run = st.start_run("add retry", goal=goal)
        model_call = st.record_model_call("claude-opus-4-5", provider="anthropic",
                                          input_summary="add a retry helper")
        st.finish_model_call(model_call, output_summary="done")
    write(repo, "app.py", AGENT)
    agent = commit_paths(repo, "agent: retry helper", "app.py")
    with AgentState.open(repo, "agent-under-test") as st:
        patch = st.propose_patch("retry helper", advances=goal, commit=agent)
        ev = st.record_eval("pytest", "Passed", score=1.0, validates=patch)
        decision = st.record_decision("Approved", "tests pass", patch=patch)
        st.finish_run("completed")
    commit_all(repo, "state: the agent's run")
    write(repo, "app.py", EDITED)
    edit = commit_all(repo, "human: faster retry")
    (repo / "lib").mkdir()
    git(repo, "mv", "app.py", "lib/app.py")
    rename = commit_all(repo, "human: move app.py to lib/")
    return History(repo, human, agent, edit, rename, goal, run, patch, ev, decision,
                   model_call)
