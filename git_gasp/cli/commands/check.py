"""`git gasp check`: the seven conformance checks of GASP Part VI."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import TextIO

import click

PROGRESS_DELAY = 1.0  # seconds a walk lasts before it shows progress


@click.command()
@click.argument("path", required=False, type=click.Path(file_okay=True, dir_okay=True))
@click.option("--fixture", is_flag=True, help="Also require the four Part VI fixture facts.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")
@click.option("--no-cache", is_flag=True,
              help="Ignore the caches of verified commits and log states (and write none).")
@click.option("--strict", is_flag=True,
              help="Fail on what the reference checker only notes (an op naming a missing "
                   "node, a snapshot directory without graph.json).")
def check(path: str | None, fixture: bool, as_json: bool, no_cache: bool, strict: bool) -> int:
    """Check that the agent repo at PATH (default: here) conforms to GASP.

    Exit status: 0 conformant, 1 not conformant, 2 usage error.
    """
    from git_gasp.base.errors import GaspError
    from git_gasp.conformance.runner import check_repo, resolve_agent_root
    from git_gasp.store.attributes import lineendings_error

    root = resolve_agent_root(path)
    converted = lineendings_error(root)
    if converted:  # one line with the fix instead of seven checks failing on every line
        raise GaspError(converted)
    _driver_note(root)
    progress = None if as_json else terminal_progress(sys.stderr)
    try:
        report = check_repo(root, fixture=fixture, use_cache=not no_cache,
                            label=path or str(root), strict=strict, progress=progress)
    finally:
        if progress is not None:
            progress.clear()
    if as_json:
        click.echo(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
    else:
        click.echo(report.to_text())
    return 0 if report.conformant else 1


class WalkProgress:
    """``check 4: walked N/M commits`` on `stream`, rewritten in place with ``\\r``, once
    the walk has lasted `delay` seconds; `clear` wipes it."""

    def __init__(self, stream: TextIO, delay: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream, self.clock = stream, clock
        self.delay = PROGRESS_DELAY if delay is None else delay
        self.start = clock()
        self.width = 0

    def __call__(self, done: int, total: int) -> None:
        if self.clock() - self.start < self.delay:
            return
        text = f"check 4: walked {done}/{total} commits"
        self._write("\r" + text + " " * max(0, self.width - len(text)))
        self.width = max(self.width, len(text))

    def clear(self) -> None:
        if self.width:
            self._write("\r" + " " * self.width + "\r")
            self.width = 0

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken terminal: no progress
            self.width = 0


def terminal_progress(stream: TextIO) -> WalkProgress | None:
    """A `WalkProgress` on `stream` when it is a terminal (never on a pipe or file)."""
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return WalkProgress(stream) if tty else None


def _driver_note(root) -> None:
    """Warn (stderr) when .gitattributes names the gasp merge driver but this clone lacks it."""
    from git_gasp.store.attributes import missing_driver_note

    note = missing_driver_note(root)
    if note:
        click.echo(f"git gasp: {note}", err=True)
