"""`git gasp report` as Markdown (a pull request comment, `$GITHUB_STEP_SUMMARY`) or
text: link-free, one table-like line per run, eval and decision (a run's own account
is `git gasp recap`'s)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from git_gasp.stats.render import lines_phrase

Short = Callable[[str], str]


_PLAIN = re.compile(r"[\w .,:;/+=%'-]*")  # words Markdown leaves as they are


def _cell(value: Any) -> str:
    """`value` for a Markdown table cell: one line, at most 80 characters; text from the
    log (a goal, an eval's command, a reason: a teammate's or a fork's) that Markdown
    could make a link, an image, a mention or HTML of goes in a code span, so the
    report stays link-free and pings no one."""
    text = "" if value is None else str(value)
    text = " ".join(text.split())
    text = text if len(text) <= 80 else text[:79] + "…"
    if _PLAIN.fullmatch(text) and "://" not in text and "www." not in text.lower():
        return text
    ticks = "`" * (max((len(r) for r in re.findall("`+", text)), default=0) + 1)
    return f"{ticks} {text} {ticks}".replace("|", "\\|")


def _headline(r: dict[str, Any]) -> list[str]:
    n = len(r["commits"])
    explained = sum(c["patch"] is not None for c in r["commits"])
    runs = len(r["runs"])
    out = [f"{n} commit{'' if n == 1 else 's'}, {explained} explained by the agent's "
           f"patches, from {runs} run{'' if runs == 1 else 's'}.",
           f"The lines it changed, at its head: {lines_phrase(r['lines'])}."]
    for name in ("agent", "model"):
        table = r["by"][name]
        if table:
            ranked = sorted(table.items(), key=lambda kv: (-kv[1], kv[0]))
            out.append(f"Agent lines by {name}: " + ", ".join(f"{_cell(k)} {v}"
                                                              for k, v in ranked) + ".")
    return out


def _sections(r: dict[str, Any], short: Short) -> list[tuple[str, list[str], list[list[str]]]]:
    s = lambda i: short(i) if i else ""  # noqa: E731
    runs = [[s(x["run"]), x["agent"] or "", x["model"] or "",
             x["goal_title"] or s(x["goal"]), x["outcome"] or "running", str(x["commits"]),
             str(x["lines"])] for x in r["runs"]]
    evals = [[s(e["eval"]), e["status"] or "", e["command"] or "", s(e["patch"])]
             for e in r["evals"]]
    decisions = [[s(d["decision"]), d["status"] or "", d["reason"] or "", s(d["patch"])]
                 for d in r["decisions"]]
    return [("Runs", ["run", "agent", "model", "goal", "outcome", "commits", "lines"], runs),
            ("Evals (failing first)", ["eval", "status", "command", "patch"], evals),
            ("Decisions", ["decision", "status", "reason", "patch"], decisions)]


def markdown(r: dict[str, Any], short: Short) -> list[str]:
    """The report `r` (`report.build`) as Markdown lines."""
    out = [f"### git gasp report: {r['base'][:12]}..{r['head'][:12]}", "", *_headline(r)]
    for title, head, rows in _sections(r, short):
        out += ["", f"**{title}**", ""]
        if not rows:
            out.append("none")
            continue
        out += ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
        out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return out


def text(r: dict[str, Any], short: Short) -> list[str]:
    """The report `r` as plain text: a line per run, eval and decision."""
    out = [f"report {r['base'][:12]}..{r['head'][:12]}", *_headline(r)]
    for title, _head, rows in _sections(r, short):
        out.append(f"{title.lower()}:" if rows else f"{title.lower()}: none")
        out += ["  " + "  ".join(_cell(c) for c in row if c != "") for row in rows]
    return out
