"""`git gasp stats` as text (one screen) or Markdown (tables that fit a pull request)."""

from __future__ import annotations

from typing import Any

TITLES = {"agent": "agent", "model": "model", "person": "person", "goal": "goal"}


def share(part: int, total: int) -> str:
    """``37.5%`` of `total` (``0%`` of nothing)."""
    return f"{100 * part / total:.1f}%" if total else "0%"


def _sorted(table: dict) -> list[tuple[str, Any]]:
    def weight(item):
        v = item[1]
        return -(sum(v.values()) if isinstance(v, dict) else v), item[0]
    return sorted(table.items(), key=weight)


def lines_phrase(lines: dict[str, int]) -> str:
    """``120 lines: 45 agent (37.5%), 75 human (62.5%)``."""
    t = lines["total"]
    return (f"{t} line{'' if t == 1 else 's'}: {lines['agent']} agent "
            f"({share(lines['agent'], t)}), {lines['human']} human ({share(lines['human'], t)})")


def activity_lines(a: dict[str, Any]) -> list[str]:
    """Sessions, calls, tokens, evals and patches, one line each."""
    tokens = ", ".join(f"{k} {v}" for k, v in sorted(a["tokens"].items())) or "none recorded"
    ev, p = a["evals"], a["patches"]
    rate = f"{100 * ev['pass_rate']:.1f}% pass" if ev["pass_rate"] is not None else "no pass rate"
    return [f"sessions {a['sessions']}, tool calls {a['tool_calls']}, model calls "
            f"{a['model_calls']}",
            f"tokens: {tokens}",
            f"evals {ev['run']} run: {ev['passed']} passed, {ev['failed']} failed ({rate})",
            f"patches {p['proposed']} proposed, {p['promoted']} promoted, "
            f"{p['rejected']} rejected"]


def _rows(table: dict) -> list[tuple[str, str]]:
    out = []
    for key, v in _sorted(table):
        if isinstance(v, dict):
            out.append((key, f"{v['agent']} agent, {v['human']} human"))
        else:
            out.append((key, str(v)))
    return out


def text(s: dict[str, Any], by: tuple[str, ...]) -> list[str]:
    """The stats `s` (`compute`) as lines of text; `by`: the breakdowns shown."""
    out = [f"{s['scope']} ({s['rev'][:12]}): {lines_phrase(s['lines'])} in {s['files']} "
           f"file{'' if s['files'] == 1 else 's'}"]
    for name in by:
        rows = _rows(s["by"][name])
        if rows:
            out.append(f"  agent lines by {name}:" if name != "person" else "  lines by person:")
            out += [f"    {k}  {v}" for k, v in rows]
    if s["changed"] is not None:
        c = s["changed"]
        out.append(f"changed in {s['scope']} ({c['commits']} commit"
                   f"{'' if c['commits'] == 1 else 's'}): {lines_phrase(c['lines'])} now")
    out += activity_lines(s["activity"])
    return out


def _table(head: tuple[str, str], rows: list[tuple[str, str]]) -> list[str]:
    cell = lambda v: v.replace("|", "\\|").replace("\n", " ")  # noqa: E731
    return [f"| {head[0]} | {head[1]} |", "| --- | ---: |",
            *(f"| {cell(k)} | {cell(v)} |" for k, v in rows)]


def markdown(s: dict[str, Any], by: tuple[str, ...]) -> list[str]:
    """The stats `s` as Markdown: a heading, the line counts, a table per breakdown."""
    out = [f"### git gasp stats: {s['scope']}", "",
           f"{lines_phrase(s['lines'])} in {s['files']} file{'' if s['files'] == 1 else 's'}"
           f" at `{s['rev'][:12]}`."]
    if s["changed"] is not None:
        c = s["changed"]
        out.append(f"Changed in the range ({c['commits']} commit"
                   f"{'' if c['commits'] == 1 else 's'}): {lines_phrase(c['lines'])}.")
    for name in by:
        rows = _rows(s["by"][name])
        if rows:
            out += ["", *_table((TITLES[name], "lines"), rows)]
    out += ["", *(f"- {line}" for line in activity_lines(s["activity"]))]
    return out
