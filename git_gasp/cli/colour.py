"""Colour as git colours: only on a terminal (or a pager fed from one), never with
``NO_COLOR`` set, and as ``color.ui`` / ``color.gasp`` say (`git config
--get-colorbool`, which knows ``auto``, ``always`` and ``never``)."""

from __future__ import annotations

import os
from typing import TextIO

from git_gasp.base.git import run

STYLES = {"ok": "32", "fail": "1;31", "warn": "33", "id": "33", "dim": "2", "kind": "36",
          "bold": "1"}
_cache: dict[bool, bool] = {}


def wanted(stream: TextIO, *, paged: bool = False) -> bool:
    """Whether to colour what goes to `stream` (`paged`: it goes through a pager that
    writes to the terminal, as git's output does)."""
    if os.environ.get("NO_COLOR"):
        return False
    try:
        tty = paged or stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    if os.environ.get("TERM") == "dumb" and tty:
        return False
    if tty not in _cache:
        _cache[tty] = _git_says(tty)
    return _cache[tty]


def _git_says(tty: bool) -> bool:
    try:
        proc = run(os.getcwd(), "config", "--get-colorbool", "color.gasp",
                   "true" if tty else "false", check=False, inherit_git_env=True)
    except Exception:  # noqa: BLE001 - no git, no repository: colour as a tty would
        return tty
    return proc.returncode == 0 and proc.stdout.strip() == b"true"


class Painter:
    """`paint(text, style)`: `text` in the ANSI style named, or as it is when off."""

    def __init__(self, on: bool) -> None:
        self.on = on

    def __call__(self, text: str, style: str) -> str:
        if not self.on or not text:
            return text
        return f"\x1b[{STYLES[style]}m{text}\x1b[m"
