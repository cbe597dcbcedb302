"""The line an observation of a tool call shows a person, and the detail beside it.

An observation's ``summary`` is one line: the tool, its outcome, the size of what it
printed and the first meaningful line of that (``Bash failed (exit 1), 212 B: FAILED
test_calc.py::test_add``); never the tool's raw response. Its ``metadata.detail``
holds the structured rest, bounded by the capture rules (``redact/capture.py``): the
outcome, the output as stored and the response object the hook received.
"""

from __future__ import annotations

import re

LINE_CHARS = 120  # of the first meaningful line
_EXIT_LINE = re.compile(r"(?:Error: )?Exit code -?\d+")
_DECOR = " \t=-*#_~.|+"
_PROGRESS = re.compile(r"[.FEsxX ]*\[ *\d{1,3}%\]")  # a test runner's progress row
_RULES = ("==", "--", "**", "##", "~~", "__")  # a heading between rules


def meaningful_line(text: str, limit: int = LINE_CHARS) -> str:
    """The first line of `text` that says something: not blank, not only rules or
    dots, not a progress row (``..F [100%]``), not ``Exit code N`` (the outcome says
    it), and not a heading between rules (``=== short test summary ===``) unless
    nothing else is there; its decoration stripped, cut to `limit` characters ("" when
    none)."""
    heading = ""
    for raw in text.splitlines():
        line = raw.strip(_DECOR)
        if not line or _EXIT_LINE.fullmatch(line) or _PROGRESS.fullmatch(line):
            continue
        bare = raw.strip()
        if bare[:2] in _RULES and bare[-2:] in _RULES:
            heading = heading or line
            continue
        return _cut(line, limit)
    return _cut(heading, limit)


def _cut(line: str, limit: int) -> str:
    return line if len(line) <= limit else line[:limit - 1] + "…"


def size(n: int) -> str:
    """A byte count a person reads: ``512 B``, ``3.4 KB``, ``1.2 MB``."""
    if n < 1000:
        return f"{n} B"
    if n < 1_000_000:
        return f"{n / 1000:.1f} KB"
    return f"{n / 1_000_000:.1f} MB"


def summary_line(tool: str, ok: bool, exit_code: int | None, text: str, nbytes: int, *,
                 show_text: bool = True) -> str:
    """``<tool> ok|failed (exit N), <size>: <first meaningful line>`` (`show_text`
    False: without the line, as when no output is kept)."""
    outcome = "ok" if ok else "failed" + (f" (exit {exit_code})" if exit_code is not None
                                          else "")
    if not nbytes:
        return f"{tool} {outcome}, no output"
    head = f"{tool} {outcome}, {size(nbytes)}"
    first = meaningful_line(text) if show_text else ""
    return f"{head}: {first}" if first else head
