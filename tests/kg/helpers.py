"""Helpers for kg tests: run `git gasp kg` and read its JSON."""

from __future__ import annotations

import json
from pathlib import Path

from tests.testing.run import gasp, out


def kg(cwd: Path, *args: str, input: str | bytes | None = None, ok: bool = True):
    """Run `git gasp kg ARGS`; with ok=True assert exit 0 and return the process."""
    data = input.encode() if isinstance(input, str) else input
    proc = gasp(cwd, "kg", *args, input=data)
    if ok:
        assert proc.returncode == 0, out(proc)
    return proc


def kg_json(cwd: Path, *args: str, input: str | None = None):
    proc = kg(cwd, *args, "--json", input=input)
    return json.loads(proc.stdout)
