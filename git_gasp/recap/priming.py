"""The first prompt of a session that continues a run (`git gasp resume`).

Deterministic, as the recap it holds: a first line naming the run and its goal (an
agent's hooks make the first prompt's first line the new session's goal), who the agent
is (its identity files, cut to `IDENTITY_LIMIT` characters), the run's recap in
Markdown, what to start with (the open tasks and the failing evals), and where the
transcript and the rest of the history are. The whole stays under `PROMPT_LIMIT`
characters, so it passes as one command-line argument (Linux takes 128 KiB).
"""

from __future__ import annotations

from git_gasp.recap import render
from git_gasp.recap.account import RunRecap

IDENTITY_LIMIT = 8000
PROMPT_LIMIT = 60_000
CUT = "\n…(cut; `git gasp recap {run}` prints the whole account)\n"


def prompt(rec: RunRecap, *, agent_id: str, identity: list[tuple[str, str]]) -> str:
    """The primed context for a new session continuing `rec` (`identity`: (path, text)
    of each identity file)."""
    goal = rec.goal.text or rec.goal.id if rec.goal else rec.task or rec.id
    lines = [f"Resume run {rec.id}: {goal}", "",
             f"You are agent `{agent_id}`, continuing run {rec.id}"
             + (f" (recorded by {rec.agent})" if rec.agent else "")
             + " in a new session. Its account, read from the agent's log, follows; "
             "pick the work up where it stopped.", ""]
    budget = IDENTITY_LIMIT
    if identity:
        lines += ["## Who you are", ""]
        for rel, text in identity:
            body = text if len(text) <= budget else text[:max(budget, 0)] + "\n…"
            budget -= len(body)
            lines += [f"From `{rel}`:", "", body, ""]
    account = render.markdown(rec).replace("\n### ", "\n#### ")  # under this prompt's ##
    lines += ["## What happened so far", "", account.replace(f"## {rec.id}",
                                                            f"### Run {rec.id}", 1)]
    start = [f"- task: {t.text}{' [' + t.status + ']' if t.status else ''}"
             for t in rec.open_tasks]
    start += [f"- failing eval: `{cmd}`" for cmd in rec.failing_evals()]
    lines += ["## Start here", ""] + (start or [
        "- nothing is recorded as left open: check the goal is met, else go on with it"])
    where = (f"the run's transcript is archived at `{rec.transcript}` in the agent's state"
             if rec.transcript else "no transcript of the run is archived")
    lines += ["", f"History: {where}; `git gasp log --run {rec.id}` lists its events and "
              f"`git gasp recap {rec.id}` retells it.", ""]
    text = "\n".join(lines)
    if len(text) > PROMPT_LIMIT:
        note = CUT.format(run=rec.id)
        text = text[:PROMPT_LIMIT - len(note)] + note
    return text
