"""Who a blamed line counts under in `stats`: a patch's line is its run's agent and
model; a Git AI note's or Agent Trace record's `ai` line is its tool's and model's; a
note saying `human`, or nothing, leaves the line a person's, the commit's git author."""

from __future__ import annotations

from git_gasp.attribution.blame import Row
from git_gasp.attribution.pins import Why
from git_gasp.attribution.porcelain import BlameLine, CommitInfo
from git_gasp.stats.authorship import UNKNOWN, Author, RunInfo, author_of
from git_gasp.stats.lines import Tally

SHA = "c" * 40


def _row(**kw) -> Row:
    return Row(BlameLine(1, SHA, 1, b"a.py", b"x = 1"), CommitInfo(SHA, {b"author": b"Dee"}),
               **kw)


def test_a_patchs_line_is_its_runs_agent_and_model():
    why = Why("patch_1", SHA, goal="goal_1", run="run_1", person="Ann")
    got = author_of(_row(why=why, pinned=True), {"run_1": RunInfo("codex", "gpt-5")})
    assert got == Author(True, "gasp", "codex", "gpt-5", "Ann", "goal_1", "run_1")
    # a run the log does not describe, a run without its person: still an agent line
    bare = author_of(_row(why=Why("patch_2", SHA)), {})
    assert bare == Author(True, "gasp", UNKNOWN, UNKNOWN, "Dee", None, None)


def test_a_notes_ai_line_and_its_human_line():
    ai = {"source": "git-ai", "type": "ai", "tool": "cursor", "model": "gpt-4o",
          "author": "Eve"}
    assert author_of(_row(ai=ai), {}) == Author(True, "git-ai", "cursor", "gpt-4o", "Eve")
    human = {"source": "git-ai", "type": "human", "author": "Eve"}
    assert author_of(_row(ai=human), {}) == Author(False, "git", person="Dee")
    assert author_of(_row(), {}) == Author(False, "git", person="Dee")


def test_the_tally_counts_each_line_once_under_each_breakdown():
    t = Tally()
    t.add(Author(True, "gasp", "codex", "gpt-5", "Ann", "goal_1", "run_1"))
    t.add(Author(True, "agent-trace", "cursor", "gpt-4o", "Ann"))
    t.add(Author(False, "git", person="Bo"))
    assert t.to_json() == {"total": 3, "agent": 2, "human": 1}
    assert t.by_agent == {"codex": 1, "cursor": 1} and t.by_goal == {"goal_1": 1}
    assert t.by_person == {"Ann": {"agent": 2, "human": 0}, "Bo": {"agent": 0, "human": 1}}
    assert t.by_source == {"gasp": 1, "agent-trace": 1} and t.by_run == {"run_1": 1}
