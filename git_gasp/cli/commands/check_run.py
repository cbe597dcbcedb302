"""What `git gasp check` does: run the checks, print the report, remember the verdict."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import TextIO

from git_gasp.base.errors import GaspError
from git_gasp.base.progress import Progress, is_terminal
from git_gasp.cli.colour import Painter, wanted
from git_gasp.cli.notes import driver_note
from git_gasp.conformance.runner import check_repo
from git_gasp.store.attributes import lineendings_error
from git_gasp.store.lastcheck import save
from git_gasp.store.location import find_agent_root

PROGRESS_DELAY: float | None = None  # seconds before progress shows (None: base.progress's)


def run_check(path: str | None, *, fixture: bool = False, as_json: bool = False,
              no_cache: bool = False, strict: bool = False, since: str | None = None) -> int:
    """Check the agent repo at `path` (default: found from here), print the report on
    stdout (text or JSON) and return the exit status: 0 conformant, 1 not."""
    root = find_agent_root(path)

    def beside_the_walk() -> None:
        converted = lineendings_error(root)
        if converted:  # one line with the fix instead of seven checks failing on every line
            raise GaspError(converted)
        driver_note(root)

    progress = None if as_json else terminal_progress(sys.stderr)
    try:
        report = check_repo(root, fixture=fixture, use_cache=not no_cache,
                            label=path or str(root), strict=strict, progress=progress,
                            meanwhile=beside_the_walk, since=since)
    finally:
        if progress is not None:
            progress.clear()
    if not fixture:  # `git gasp status` shows it (a fixture check proves something else)
        save(root, conformant=report.conformant, now_ms=int(time.time() * 1000),
             failed=[c.number for c in report.checks if not c.passed])
    if as_json:
        text = json.dumps(report.to_json(), ensure_ascii=False, indent=2)
    else:
        text = report.to_text()
        if sys.stdout.isatty() and wanted(sys.stdout):
            text = coloured(text, Painter(True))
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
    return 0 if report.conformant else 1


def coloured(text: str, paint) -> str:
    """The text report with its marks and verdict in colour (ok green, FAIL red)."""
    lines = []
    for line in text.split("\n"):
        if line.startswith("ok  "):
            line = paint("ok", "ok") + line[2:]
        elif line.startswith("FAIL"):
            line = paint("FAIL", "fail") + line[4:]
        elif line.endswith(": NOT conformant"):
            line = line[: -len("NOT conformant")] + paint("NOT conformant", "fail")
        elif line.endswith(": conformant"):
            line = line[: -len("conformant")] + paint("conformant", "ok")
        lines.append(line)
    return "\n".join(lines)


class WalkProgress(Progress):
    """``check 4: walked N/M commits`` (`base.progress.Progress`)."""

    def __init__(self, stream: TextIO, delay: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(stream, "check 4: walked", "commits",
                         PROGRESS_DELAY if delay is None else delay, clock)


def terminal_progress(stream: TextIO) -> WalkProgress | None:
    """A `WalkProgress` on `stream` when it is a terminal (never on a pipe or file)."""
    return WalkProgress(stream) if is_terminal(stream) else None
