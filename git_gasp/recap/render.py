"""A `RunRecap` written for people: Markdown (the journal's entry, headed ``## <run
id>``) or plain text, the same sections in the same order; JSON is its `to_json`.

Sections: the goal and the run (who, when, how it ended, what it was resumed from),
what was tried, what failed and why, the patches with their commits, the evals (each
command with its outcomes in order: ``Failed, then Passed``), the decisions with their
reasons, what is left open, and where the transcript is. Empty sections are left out.
"""

from __future__ import annotations

from git_gasp.recap.account import Item, RunRecap
from git_gasp.runtime.journal import when_utc

FORMATS = ("text", "markdown", "json")


def duration(ms: int | None) -> str:
    """`ms` as ``1h 2m``, ``3m 4s`` or ``5s`` ("" when unknown)."""
    if ms is None or ms < 0:
        return ""
    s = ms // 1000
    h, m, sec = s // 3600, s // 60 % 60, s % 60
    return f"{h}h {m}m" if h else (f"{m}m {sec}s" if m else f"{sec}s")


def _status(item: Item) -> str:
    return f" [{item.status}]" if item.status else ""


def _code(text: str, markdown: bool) -> str:
    if not markdown:
        return text
    fence = "``" if "`" in text else "`"
    return f"{fence}{text}{fence}" if text else "(no command)"


def outcomes(statuses: list[str]) -> str:
    """``Failed, then Passed``: statuses in order, repeats counted (``Passed ×2``)."""
    runs: list[list] = []
    for s in statuses:
        if runs and runs[-1][0] == s:
            runs[-1][1] += 1
        else:
            runs.append([s, 1])
    return ", then ".join(s + (f" ×{n}" if n > 1 else "") for s, n in runs)


def header(rec: RunRecap) -> list[str]:
    """The run's lines: goal, task, who and when, how it ended, its hand-offs."""
    goal = rec.goal
    lines = [f"goal: {goal.text or goal.id}{_status(goal)} ({goal.id})" if goal
             else "goal: (none recorded)"]
    if rec.task:
        lines.append(f"task: {rec.task}")
    who = ", ".join(x for x in (rec.agent, f"by {rec.person}" if rec.person else None,
                                "model " + ", ".join(rec.models) if rec.models else None) if x)
    when = when_utc(rec.started_ts_ms)
    if rec.finished_ts_ms is not None:
        took = duration(rec.finished_ts_ms - rec.started_ts_ms) if rec.started_ts_ms else ""
        when += f" to {when_utc(rec.finished_ts_ms)}" + (f" ({took})" if took else "")
    lines.append("run: " + ", ".join(x for x in (who, when) if x))
    end = rec.status + (f": {rec.outcome}" if rec.outcome else "")
    lines.append(f"status: {end}" + (f" (error: {rec.error})" if rec.error else ""))
    if rec.derived_from:
        lines.append("resumed from: " + ", ".join(rec.derived_from))
    if rec.continued_by:
        lines.append("resumed in: " + ", ".join(rec.continued_by))
    return lines


def sections(rec: RunRecap, markdown: bool) -> list[tuple[str, list[str]]]:
    """(title, lines) of each non-empty section, in order."""
    tried = [f"task: {t.text}{_status(t)}" for t in rec.tasks]
    tried += [f"hypothesis: {h.text}{_status(h)}" for h in rec.hypotheses]
    tried += [f"patch: {p.text}{_status(p)}" for p in rec.patches]
    if rec.tool_calls or rec.model_calls:
        tools = ", ".join(f"{k} {v}" for k, v in sorted(rec.tools.items(),
                                                       key=lambda kv: (-kv[1], kv[0])))
        calls = f"{rec.tool_calls} tool call(s)" + (f" ({tools})" if tools else "")
        calls += f", {rec.tool_failures} failed" if rec.tool_failures else ""
        tried.append(calls + f"; {rec.model_calls} model call(s)")
    failed = []
    for f in rec.failures:
        why = f.extra.get("explained_by") or []
        failed.append(f"{f.text}{_status(f)}" + (" — why: " + "; ".join(why) if why else ""))
    if rec.error:
        failed.append(f"the run's error: {rec.error}")
    patches = [f"{p.text or p.id}{_status(p)}"
               + (f", commit {_code(p.extra['commit'], markdown)}" if "commit" in p.extra
                  else ", no commit pinned") for p in rec.patches]
    evals = [f"{_code(cmd, markdown)}: {outcomes(seen)}" for cmd, seen in rec.eval_outcomes()]
    decisions = [f"{d.status or '?'}: {d.text or '(no reason given)'}" for d in rec.decisions]
    left = [f"task: {t.text}{_status(t)}" for t in rec.open_tasks]
    left += [f"failing eval: {_code(cmd, markdown)}" for cmd in rec.failing_evals()]
    out = [("What was tried", tried), ("What failed and why", failed),
           ("Patches", patches), ("Evals", evals), ("Decisions", decisions),
           ("Left open", left)]
    if rec.transcript:
        out.append(("Transcript", [rec.transcript]))
    return [(title, lines) for title, lines in out if lines]


def markdown(rec: RunRecap) -> str:
    """The run's account as Markdown, headed ``## <run id>`` (a journal entry)."""
    lines = [f"## {rec.id}", ""]
    lines += [f"- {line}" for line in header(rec)]
    for title, items in sections(rec, True):
        lines += ["", f"### {title}", ""] + [f"- {i}" for i in items]
    return "\n".join(lines) + "\n"


def text(rec: RunRecap) -> str:
    """The run's account as plain text for a terminal."""
    lines = [f"run {rec.id}"] + [f"  {line}" for line in header(rec)]
    for title, items in sections(rec, False):
        lines += [f"  {title.lower()}:"] + [f"    - {i}" for i in items]
    return "\n".join(lines) + "\n"
