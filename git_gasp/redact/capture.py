"""How much of what an agent's tools print and take the log keeps: ``[capture]`` in
``.agent/config.toml``.

    [capture]
    tool_output = "summary"   # "full" (up to field_limit), "summary" (500 characters), "none"
    field_limit = 4096        # bytes of any one stored field of outside text
    file_inputs = "digest"    # Write/Edit contents as size, sha256 and first line; "full"
    transcripts = true        # archive the redacted transcript under transcripts/
    paths = "relative"        # project paths relative, home as ~; "absolute" keeps them

The rules cover every field stored from a session: a tool's input (`tool_input`), its
output (`output`; a file tool's output is its first line under ``file_inputs =
"digest"``, `file_output`), its structured response kept beside the observation
(`response`: file contents as digests, strings cut, at most ``field_limit`` bytes), and
the text of what is lifted from them (`bound`).

Every stored field is redacted first and cut second (a cut never splits a secret the
redactor would have caught), and a cut field is recorded as its length and the sha256
of its (redacted) text in the event's ``metadata.cut``: for an imported transcript the
whole field's; for the live hook, of what reached the writer (the hook keeps at most
the first and last 8 KiB of a payload string, `adapters.payloads.trim_payload`, before
it redacts, so that a tool printing megabytes costs it nothing). With the defaults an
event line stays well under 32 KiB whatever a tool prints.

The settings are read by ``base.agentconfig`` (which validates them); this module
applies them.
"""

from __future__ import annotations

import json
import os
import re
from hashlib import sha256

from git_gasp.base import agentconfig

SUMMARY_CHARS = 500
FILE_TOOLS = {"Write": ("content",), "Edit": ("old_string", "new_string"),
              "MultiEdit": ("edits",), "NotebookEdit": ("new_source",),
              "apply_patch": ("input", "patch")}
# what a file tool's response repeats of the file (Claude Code 2.1.328: Write's
# content, Edit's oldString/newString, both the originalFile and a structuredPatch)
FILE_RESPONSE_KEYS = ("content", "originalFile", "structuredPatch", "oldString", "newString",
                      "edits", "patch", "gitDiff", "new_source", "old_string", "new_string")
DETAIL_ITEMS = 20  # of a list in a response's stored detail
DETAIL_DEPTH = 4  # containers nested deeper are stored as "…"
_DIGEST = re.compile(r"<\d+ bytes, sha256 [0-9a-f]{12}>: ")


class Capture(agentconfig.Capture):
    """The capture settings of one agent repository, and how they cut what is stored."""

    def output(self, text: str, cut: dict, field: str = "output_summary") -> str:
        """A tool's (redacted) output as stored under `field`; a cut is noted in `cut`."""
        if self.tool_output == "none":
            return _note(text, "", cut, field) if text else ""
        limit = SUMMARY_CHARS if self.tool_output == "summary" else None
        return self.bound(text, cut, field, chars=limit)

    def file_digests(self, tool: str, value: object) -> object:
        """`value`, a tool's input, with the file contents of Write/Edit as digests
        (`file_inputs = "digest"`)."""
        if self.file_inputs == "digest" and isinstance(value, dict) and tool in FILE_TOOLS:
            return {k: (digest(v) if k in FILE_TOOLS[tool] else v) for k, v in value.items()}
        return value

    def file_output(self, tool: str, text: str) -> str:
        """What a file tool printed, as stored: its first line alone under
        `file_inputs = "digest"` (the lines after it may show the file, as a snippet
        of an edit does); any other tool's output unchanged."""
        if self.file_inputs == "digest" and tool in FILE_TOOLS:
            return text.strip().split("\n", 1)[0] if text.strip() else ""
        return text

    def response(self, tool: str, value: object) -> object:
        """A tool's (redacted) structured response as stored beside its observation:
        under `file_inputs = "digest"` the file contents a file tool's response repeats
        as digests; with `tool_output = "none"` only its numbers and flags; each string
        cut like a summary, each list to its first DETAIL_ITEMS items, what is nested
        deeper than DETAIL_DEPTH to "…"; the whole at most `field_limit` bytes (else its
        numbers and flags, and its size and sha256 under ``cut``). None when there is
        no object to keep."""
        if not isinstance(value, dict):
            return None
        text = json.dumps(value, sort_keys=True, ensure_ascii=False)
        if self.tool_output == "none":
            return _scalars(value)
        files = self.file_inputs == "digest" and (tool in FILE_TOOLS or any(
            k in value for k in ("originalFile", "structuredPatch")))
        kept = self._detail(value, files, 0)
        if len(json.dumps(kept, ensure_ascii=False).encode("utf-8", "surrogatepass")) > \
                self.field_limit:
            kept = _scalars(value)
            _note(text, "", kept.setdefault("cut", {}), "response")
        return kept

    def _detail(self, value: object, files: bool, depth: int) -> object:
        if isinstance(value, str):
            return self.bound(value, {}, "", chars=SUMMARY_CHARS)
        if isinstance(value, (dict, list)) and depth >= DETAIL_DEPTH:
            return "…"
        if isinstance(value, dict):
            return {k: (digest(v) if files and k in FILE_RESPONSE_KEYS and v is not None
                        else self._detail(v, files, depth + 1)) for k, v in value.items()}
        if isinstance(value, list):
            return [self._detail(v, files, depth + 1) for v in value[:DETAIL_ITEMS]]
        return value

    def tool_input(self, tool: str, value: object, cut: dict,
                   field: str = "input_summary") -> str:
        """A tool's (redacted) input as stored: file contents as digests
        (`file_digests`), then summarised and bounded like an output."""
        value = self.file_digests(tool, value)
        text = value if isinstance(value, str) else json.dumps(value, sort_keys=True,
                                                               ensure_ascii=False)
        return self.bound(text, cut, field, chars=SUMMARY_CHARS)

    def bound(self, text: str, cut: dict, field: str, *, chars: int | None = None) -> str:
        """`text` cut to `chars` characters and `field_limit` UTF-8 bytes (with "…"),
        its full length and sha256 noted in `cut[field]` when cut."""
        kept = text if chars is None or len(text) <= chars else text[:chars - 1] + "…"
        data = kept.encode("utf-8", "surrogatepass")
        if len(data) > self.field_limit:
            kept = data[:self.field_limit - 3].decode("utf-8", "ignore") + "…"
        return kept if kept == text else _note(text, kept, cut, field)


def _note(text: str, kept: str, cut: dict, field: str) -> str:
    data = text.encode("utf-8", "surrogatepass")
    cut[field] = {"bytes": len(data), "sha256": sha256(data).hexdigest()}
    return kept


def _scalars(value: dict) -> dict:
    """The numbers, flags and nulls of a response's top level (no text of it)."""
    return {k: v for k, v in value.items() if v is None or isinstance(v, (bool, int, float))}


def digest(value: object) -> str:
    """`<N bytes, sha256 abcdef012345>: first line` for a file's contents (for a list
    or an object, such as an edit list or a patch's hunks, its count of items instead;
    a digest already made, by the hook before it clips the input, is kept as it is)."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True,
                                                           ensure_ascii=False)
    if text.startswith("<") and _DIGEST.match(text):
        return text
    data = text.encode("utf-8", "surrogatepass")
    if isinstance(value, str):
        first = text.split("\n", 1)[0][:80]
    else:  # a patch's hunks, an edit list: their JSON's first line is the file's text
        first = f"({len(value)} items)" if isinstance(value, (list, dict)) else ""
    return f"<{len(data)} bytes, sha256 {sha256(data).hexdigest()[:12]}>: {first}"


def load(root: str | os.PathLike[str]) -> Capture:
    """The capture settings of the agent at `root` (defaults when none are set); a
    `[capture]` that is malformed is a FormatError naming the key."""
    settings = agentconfig.read_config(root).capture
    return Capture(settings.tool_output, settings.field_limit, settings.file_inputs,
                   settings.transcripts, settings.paths)


# --- the line an observation of a tool call shows ---------------------------------
# An observation's ``summary`` is one line: the tool, its outcome, the size of what it
# printed and the first meaningful line of that (``Bash failed (exit 1), 212 B: FAILED
# test_calc.py::test_add``), never the tool's raw response; the structured rest goes
# in its ``metadata.detail``, bounded by the rules above.

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
