"""The report's Markdown with hostile text from the log (a fork's pull request carries
its own state branch): no link, image, mention or HTML reaches the comment, and a pipe
never splits a table cell."""

from __future__ import annotations

import re

from git_gasp.stats.report_render import markdown

HOSTILE = {
    "goal": "[click](https://evil.example/x)",
    "command": "![](https://tracker.example/p.png) <img src=x onerror=alert(1)>",
    "reason": "cc @acme/security and www.evil.example | `rm -rf` ``x``",
    "model": "@everyone",
}


def _report() -> dict:
    return {"base": "a" * 40, "head": "b" * 40,
            "commits": [{"commit": "c" * 40, "subject": "s", "run": "run_1", "patch": "p1"}],
            "runs": [{"run": "run_1", "agent": "codex", "model": HOSTILE["model"],
                      "goal": "goal_1", "goal_title": HOSTILE["goal"], "outcome": "failed",
                      "commits": 1, "lines": 3}],
            "evals": [{"eval": "eval_1", "status": "Failed", "command": HOSTILE["command"],
                       "patch": "p1"},
                      {"eval": "eval_2", "status": "Passed", "command": "ruff check",
                       "patch": "p1"}],
            "decisions": [{"decision": "d1", "status": "Rejected",
                           "reason": HOSTILE["reason"], "patch": "p1"}],
            "lines": {"total": 3, "agent": 3, "human": 0},
            "by": {"agent": {"codex": 3}, "model": {HOSTILE["model"]: 3}}}


def _outside_code(line: str) -> str:
    """`line` with its code spans (any number of backticks) taken out."""
    return re.sub(r"(`+) .*? \1", "", line)


def test_hostile_text_is_inert_and_plain_text_stays_plain():
    lines = markdown(_report(), lambda i: i)
    text = "\n".join(lines)
    for line in lines:
        bare = _outside_code(line)
        for active in ("](", "![", "<img", "@", "://", "www."):
            assert active not in bare, (active, line)
    for value in HOSTILE.values():  # each one still said, inside a code span
        assert " ".join(value.split()).replace("|", "\\|") in text
    rows = [ln for ln in lines if ln.startswith("| d1 ")]
    assert len(rows) == 1 and _outside_code(rows[0]).count("|") == 5  # four cells
    assert "| eval_2 | Passed | ruff check | p1 |" in lines  # plain words as they were
    assert "| run_1 | codex | ` @everyone ` |" in text
