"""README.md's fenced code blocks, and the ones a named test runs (`marked_blocks`).

A block that cannot run in CI as written carries `<!-- tested-by: tests/PATH.py::NAME -->`
as the last non-blank line before its opening fence; that test fetches the block with
`marked_blocks()` (called from the test function itself), so the marker and the test name
each other (tests/test_readme_blocks.py holds both to it).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.testing.paths import REPO_ROOT

README = REPO_ROOT / "README.md"
MARKER = re.compile(r"^\s*<!-- tested-by: (\S+) -->\s*$")
_FENCE = re.compile(r"^(\s*)```(\S*)\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced block: its opening fence's line (1-based), info string, text (the
    fence's indent removed) and the test its marker names, if any."""

    line: int
    lang: str
    text: str
    tested_by: str | None

    def where(self) -> str:
        return f"README.md:{self.line} ({self.lang or 'no language'} block)"


def blocks(text: str | None = None) -> list[Block]:
    """Every fenced block of README.md (or of `text`), in order; an unclosed fence fails."""
    lines = (README.read_text() if text is None else text).splitlines()
    out, i = [], 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang, start = m.group(1), m.group(2), i
        i += 1
        body = []
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        assert i < len(lines), f"README.md:{start + 1}: unclosed code fence"
        before = next((ln for ln in reversed(lines[:start]) if ln.strip()), "")
        marker = MARKER.match(before)
        out.append(Block(start + 1, lang, "\n".join(body) + "\n",
                         marker.group(1) if marker else None))
        i += 1
    return out


def node_id(path: str, name: str) -> str:
    """`tests/x.py::test_name` for the test function `name` of the file at `path`."""
    return f"{Path(path).resolve().relative_to(REPO_ROOT).as_posix()}::{name}"


def marked_blocks() -> list[Block]:
    """The README blocks whose marker names the calling test function (at least one)."""
    caller = sys._getframe(1).f_code
    me = node_id(caller.co_filename, caller.co_name)
    found = [b for b in blocks() if b.tested_by == me]
    assert found, f"no README block is marked <!-- tested-by: {me} -->"
    return found
