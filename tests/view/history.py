"""An agent history for the view tests, recorded through the runtime as an agent would:
a goal with a task, a run with model and tool calls (tokens recorded), a failure and an
observation explaining it, a patch pinned to a commit, its eval and decision; and a
second goal whose title (and its patch's) is hostile markup."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from git_gasp.runtime.state import AgentState

# Each would change the page if it ever ran or were parsed as markup: a marker on
# <body>, the document's title, or a request to `port` (a local server counting hits).
HOSTILE_IMG = ("<img src=x onerror=\"document.title='PWNED';"
               "document.body.setAttribute('data-pwned','img')\">")
HOSTILE_SCRIPT = "</script><script>document.body.setAttribute('data-pwned','script')</script>"


def hostile_fetch(port: int) -> str:
    """A title that would fetch from a local server if parsed as markup."""
    return (f"<img src=\"http://127.0.0.1:{port}/pwn.png\">"
            f"<link rel=stylesheet href=\"http://127.0.0.1:{port}/pwn.css\">")


@dataclass
class History:
    goal: str
    task: str
    run: str
    patch: str
    eval: str
    decision: str
    failure: str
    observation: str
    evil_goal: str
    evil_patch: str
    second_run: str


def record(root: Path, port: int = 9) -> History:
    """Record the history into the agent repo at `root`."""
    state = AgentState.open(root, "tester")
    try:
        goal = state.record_goal("Make retry reliable", "retries drop state after timeout")
        task = state.record_task("Persist the retry counter", goal=goal)
        run = state.start_run("fix retry skill", goal=goal, task_id=task)
        model = state.record_model_call("claude-test", input_summary="plan the fix")
        state.finish_model_call(model, output_summary="edit retry.py",
                                usage={"input_tokens": 1200, "output_tokens": 340})
        tool = state.record_tool_call("pytest", input_summary="pytest tests/test_retry.py")
        state.finish_tool_call(tool, output_summary="1 failed", success=False)
        obs = state.record_observation("counter resets after a timeout", about=goal)
        failure = state.record_failure("retry loses its counter", observation=obs)
        patch = state.propose_patch("persist retry counter", advances=goal, addresses=failure,
                                    commit="abc1234def")
        ev = state.record_eval("pytest tests/test_retry.py", "Passed", score=1.0,
                               validates=patch)
        decision = state.record_decision("Approved", "eval passed; promote", patch=patch)
        state.finish_run("success")
        evil_goal = state.record_goal(HOSTILE_IMG + HOSTILE_SCRIPT + hostile_fetch(port),
                                      HOSTILE_SCRIPT)
        second = state.start_run(HOSTILE_IMG, goal=evil_goal)
        evil_patch = state.propose_patch(HOSTILE_SCRIPT + " <b>bold?</b> &amp;",
                                         advances=evil_goal)
        state.finish_run("failure", error=HOSTILE_IMG)
    finally:
        state.close()
    return History(goal, task, run, patch, ev, decision, failure, obs, evil_goal, evil_patch,
                   second)


def write_many_runs(root: Path, n_runs: int) -> int:
    """Append `n_runs` runs (a goal every ten, each run with a model call, a tool call,
    a patch and its eval, every event paired as the runtime pairs it) to the log at
    `root`, as canonical lines; returns how many runs the log then holds."""
    from tests.testing.events import create, line, relate, update

    chunks: list[bytes] = []
    ts = 1_767_225_600_000
    goal = ""

    def pair(eid: str, kind: str, payload: dict, corr: str, *op_list: dict) -> None:
        nonlocal ts
        ts += 1000
        chunks.append(line(eid, kind, payload, None, corr, ts))
        chunks.append(line(eid + "o", "state.ops_applied", list(op_list), eid, corr, ts))

    for r in range(n_runs):
        if r % 10 == 0:
            goal = f"goal_{r:06d}"
            pair(f"event_g{r}", "goal.created", {"id": goal, "title": f"goal {r}",
                                                 "status": "Open"}, goal,
                 create(goal, "goal", title=f"goal {r}", status="Open"))
        run, model, tool, patch, ev = (f"{k}_{r:06d}" for k in
                                       ("run", "model_call", "tool_call", "patch", "eval"))
        pair(f"event_rs{r}", "run.started", {"run_id": run, "task": f"task {r}",
                                             "goal_id": goal}, run,
             create(run, "run", task=f"task {r}", status="running", goal_id=goal),
             relate(run, "serves", goal))
        pair(f"event_mc{r}", "model.called", {"id": model, "run_id": run, "model": "m1"}, run,
             create(model, "model_call", model="m1", run_id=run, status="running"),
             relate(model, "produced_by", run))
        pair(f"event_mf{r}", "model.finished", {"id": model, "run_id": run, "success": True,
                                                "usage": {"input_tokens": 10}}, run,
             update(model, status="succeeded"))
        pair(f"event_tc{r}", "tool.called", {"id": tool, "run_id": run, "tool": "pytest"}, run,
             create(tool, "tool_call", tool="pytest", run_id=run, status="running"),
             relate(tool, "produced_by", run))
        pair(f"event_tf{r}", "tool.finished", {"id": tool, "run_id": run, "success": r % 3 > 0},
             run, update(tool, status="succeeded"))
        pair(f"event_p{r}", "patch.proposed", {"id": patch, "title": f"patch {r}",
                                               "status": "Proposed"}, run,
             create(patch, "patch", title=f"patch {r}", status="Proposed"),
             relate(patch, "advances", goal), relate(patch, "produced_by", run))
        pair(f"event_e{r}", "eval.finished", {"id": ev, "command": "pytest", "status": "Passed"},
             run, create(ev, "eval", command="pytest", status="Passed"),
             relate(patch, "validated_by", ev))
        pair(f"event_rf{r}", "run.finished", {"run_id": run, "outcome": "success"}, run,
             update(run, status="finished", outcome="success"))
    log = root / "state" / "events.jsonl"
    with open(log, "ab") as fh:
        fh.write(b"".join(chunks))
    return sum(1 for ln in log.read_bytes().splitlines() if b'"kind":"run.started"' in ln)
