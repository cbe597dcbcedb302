"""Who wrote one blamed line, in the terms `stats` sums: agent or human, and the agent,
model, person and goal it counts under.

A line is an *agent* line when a patch of the fold explains its commit (blame's pins),
or, failing that, when a Git AI note or an imported Agent Trace record says an AI wrote
it (``type: ai``); every other line is a *human* line. Its agent and model: the run's
(`RunInfo`) for a patch's line, the note's or record's ``tool`` and ``model`` otherwise.
Its person: who ran the run, else the note's author, else the commit's git author.
"""

from __future__ import annotations

from dataclasses import dataclass

from git_gasp.attribution.blame import Row

UNKNOWN = "(unknown)"  # an agent line whose agent, model or person nobody recorded


@dataclass(frozen=True)
class RunInfo:
    """What a run says of itself: the agent that ran it and the model it called most."""

    agent: str | None
    model: str | None


@dataclass(frozen=True)
class Author:
    """One line's authorship."""

    agent_line: bool
    source: str  # "gasp" (a patch's pin), "git-ai", "agent-trace" or "git" (plain blame)
    agent: str | None = None
    model: str | None = None
    person: str | None = None
    goal: str | None = None
    run: str | None = None


def _git_author(row: Row) -> str | None:
    name = row.info.get(b"author").decode("utf-8", "replace").strip()
    return name or None


def author_of(row: Row, runs: dict[str, RunInfo]) -> Author:
    """`row`'s authorship (module doc); `runs`: what each run of the fold says."""
    why = row.why
    if why is not None:
        info = runs.get(why.run or "") or RunInfo(None, None)
        return Author(True, "gasp", info.agent or UNKNOWN, info.model or UNKNOWN,
                      why.person or _git_author(row) or UNKNOWN, why.goal, why.run)
    ai = row.ai
    if ai is not None and ai.get("type") == "ai":
        return Author(True, str(ai.get("source")), ai.get("tool") or UNKNOWN,
                      ai.get("model") or UNKNOWN,
                      ai.get("author") or _git_author(row) or UNKNOWN)
    return Author(False, "git", person=_git_author(row) or UNKNOWN)
