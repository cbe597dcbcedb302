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

The config is parsed only when it mentions ``capture`` (most never do): the agent hook
runs on every tool call and a TOML parser costs more than the rest of a call.
"""

from __future__ import annotations

import json
import os
import re
from hashlib import sha256

from git_gasp.base.errors import GaspError
from git_gasp.base.files import NotARegularFile, read_regular_file
from git_gasp.base.outside import why_unreadable

SUMMARY_CHARS = 500
OUTPUTS = ("full", "summary", "none")
FILE_INPUTS = ("digest", "full")
FILE_TOOLS = {"Write": ("content",), "Edit": ("old_string", "new_string"),
              "MultiEdit": ("edits",), "NotebookEdit": ("new_source",)}
_DIGEST = re.compile(r"<\d+ bytes, sha256 [0-9a-f]{12}>: ")
_CONFIG_LIMIT = 1 << 20
_MAX_FIELD_LIMIT = 1 << 20


class CaptureError(GaspError):
    """`[capture]` in .agent/config.toml is not what this module reads."""


class Capture:
    """The capture settings of one agent repository."""

    __slots__ = ("field_limit", "file_inputs", "tool_output", "transcripts")

    def __init__(self, tool_output: str = "summary", field_limit: int = 4096,
                 file_inputs: str = "digest", transcripts: bool = True) -> None:
        self.tool_output, self.field_limit = tool_output, field_limit
        self.file_inputs, self.transcripts = file_inputs, transcripts

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


def load(root: str | os.PathLike) -> Capture:
    """The capture settings of the agent at `root` (defaults when none are set); a
    `[capture]` that is malformed is a `CaptureError` naming the key."""
    path = os.path.join(os.fspath(root), ".agent", "config.toml")
    try:
        data = read_regular_file(path, limit=_CONFIG_LIMIT, root=root)
    except NotARegularFile:
        data = None
    if not data or b"capture" not in data:
        return Capture()
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        table = tomllib.loads(data.decode("utf-8")).get("capture", {})
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise CaptureError(f"{path}: {why_unreadable(exc)}") from None
    return _from_table(table, path)


def _from_table(table: object, path: str) -> Capture:
    if not isinstance(table, dict):
        raise CaptureError(f"{path}: capture must be a table")
    got = Capture()
    for key, value in table.items():
        if key == "tool_output" and value in OUTPUTS:
            got.tool_output = value
        elif key == "file_inputs" and value in FILE_INPUTS:
            got.file_inputs = value
        elif key == "transcripts" and isinstance(value, bool):
            got.transcripts = value
        elif key == "field_limit" and type(value) is int and 64 <= value <= _MAX_FIELD_LIMIT:
            got.field_limit = value
        else:
            raise CaptureError(f"{path}: [capture] {key} = {value!r} is not one of: "
                               f"tool_output {'|'.join(OUTPUTS)}, field_limit 64..."
                               f"{_MAX_FIELD_LIMIT}, file_inputs {'|'.join(FILE_INPUTS)}, "
                               "transcripts true|false")
    return got
