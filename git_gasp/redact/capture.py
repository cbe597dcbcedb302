"""How much of what an agent's tools print and take the log keeps: ``[capture]`` in
``.agent/config.toml``.

    [capture]
    tool_output = "summary"   # "full" (up to field_limit), "summary" (500 characters), "none"
    field_limit = 4096        # bytes of any one stored field of outside text
    file_inputs = "digest"    # Write/Edit contents as size, sha256 and first line; "full"
    transcripts = true        # archive the redacted transcript under transcripts/

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
              "MultiEdit": ("edits",), "NotebookEdit": ("new_source",)}
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


def digest(value: object) -> str:
    """`<N bytes, sha256 abcdef012345>: first line` for a file's contents (a digest
    already made, by the hook before it clips the input, is kept as it is)."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True,
                                                           ensure_ascii=False)
    if text.startswith("<") and _DIGEST.match(text):
        return text
    data = text.encode("utf-8", "surrogatepass")
    first = text.split("\n", 1)[0][:80]
    return f"<{len(data)} bytes, sha256 {sha256(data).hexdigest()[:12]}>: {first}"


def load(root: str | os.PathLike[str]) -> Capture:
    """The capture settings of the agent at `root` (defaults when none are set); a
    `[capture]` that is malformed is a FormatError naming the key."""
    settings = agentconfig.read_config(root).capture
    return Capture(settings.tool_output, settings.field_limit, settings.file_inputs,
                   settings.transcripts)
