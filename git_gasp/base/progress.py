"""Progress on a terminal, as git shows it: ``LABEL N/M UNIT`` on stderr, rewritten in
place with ``\\r`` once the work has lasted a second, wiped at the end; never on a pipe
or a file (`on_terminal` gives None there)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TextIO

DELAY = 1.0  # seconds of work before progress shows (GASP_PROGRESS_DELAY overrides it)


class Progress:
    """Called as (done, total); `clear` wipes what it drew."""

    def __init__(self, stream: TextIO, label: str, unit: str, delay: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream, self.label, self.unit, self.clock = stream, label, unit, clock
        self.delay = default_delay() if delay is None else delay
        self.start = clock()
        self.width = 0

    def __call__(self, done: int, total: int) -> None:
        if self.clock() - self.start < self.delay:
            return
        text = f"{self.label} {done}/{total} {self.unit}"
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


def default_delay() -> float:
    """`GASP_PROGRESS_DELAY` seconds when set to a number, else DELAY."""
    try:
        return max(0.0, float(os.environ["GASP_PROGRESS_DELAY"]))
    except (KeyError, ValueError):
        return DELAY


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def on_terminal(stream: TextIO, label: str, unit: str) -> Progress | None:
    """A `Progress` on `stream` when it is a terminal, else None."""
    return Progress(stream, label, unit) if is_terminal(stream) else None
