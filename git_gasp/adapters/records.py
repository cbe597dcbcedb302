"""The neutral intermediate form every agent reader produces, and transcript file I/O.

A reader (``claude_code.read_transcript``, ``codex.read_rollout``) turns one agent's
native session file into a :class:`Transcript`: session facts plus an ordered list of
:class:`Record` objects. Projectors and the lifting heuristics work on records only,
never on an agent's own line format, so a new agent version means a new reader and
nothing else.

Record kinds (``Record.kind``) and their ``data``:

- ``user_prompt``: ``text`` (and ``prompt_id`` where the agent names the prompt, as
  its hooks do)
- ``assistant_text``: ``text``, ``message_id``
- ``model_response``: ``message_id``, ``model``, ``usage`` (dict or None),
  ``stop_reason``
- ``tool_use``: ``tool_use_id``, ``name``, ``input`` (JSON), ``message_id``
- ``tool_result``: ``tool_use_id``, ``output`` (str), ``is_error`` (bool),
  ``exit_code`` (int or None)

Every record has a ``key`` unique within its session (message id, tool use id,
``result:<tool use id>``, or the agent's line uuid), the ``parent`` key that caused
it (or None at a root) and ``ts_ms`` when the agent recorded a time.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from git_gasp.base.errors import FormatError, GaspError
from git_gasp.base.outside import load_json
from git_gasp.base.record import Record as Value
from git_gasp.redact.redactor import Redactor

USER_PROMPT = "user_prompt"
ASSISTANT_TEXT = "assistant_text"
MODEL_RESPONSE = "model_response"
TOOL_USE = "tool_use"
TOOL_RESULT = "tool_result"


class Record(Value):
    """One step of a session in agent-neutral form."""

    FIELDS = ("kind", "key", "parent", "ts_ms", "data", "line")

    def __init__(self, kind: str, key: str, parent: str | None, ts_ms: int | None,
                 data: dict[str, Any], line: int = 0) -> None:
        self.kind = kind
        self.key = key
        self.parent = parent
        self.ts_ms = ts_ms
        self.data = data
        self.line = line  # 1-based physical line of the source it came from (first line)

    def get(self, name: str, default: Any = None) -> Any:
        return self.data.get(name, default)

    def as_dict(self) -> dict[str, Any]:
        """The fields by name, `Record(**r)` makes it again (``data`` copied)."""
        return {"kind": self.kind, "key": self.key, "parent": self.parent, "ts_ms": self.ts_ms,
                "data": dict(self.data), "line": self.line}


class SessionInfo(Value):
    """What a session file says about the session as a whole."""

    FIELDS = ("agent", "session_id", "agent_version", "cwd", "git_branch", "git_commit",
              "model", "started_ms", "ended_ms")

    def __init__(self, agent: str, session_id: str | None = None,
                 agent_version: str | None = None, cwd: str | None = None,
                 git_branch: str | None = None, git_commit: str | None = None,
                 model: str | None = None, started_ms: int | None = None,
                 ended_ms: int | None = None) -> None:
        self.agent = agent  # "claude-code" | "codex"
        self.session_id = session_id
        self.agent_version = agent_version
        self.cwd = cwd
        self.git_branch = git_branch
        self.git_commit = git_commit
        self.model = model
        self.started_ms = started_ms
        self.ended_ms = ended_ms


class Transcript(Value):
    """A parsed session: facts, records in causal-compatible order, what was skipped."""

    FIELDS = ("session", "records", "skipped", "warnings", "line_count")

    def __init__(self, session: SessionInfo, records: list[Record] | None = None,
                 skipped: Counter[str] | None = None, warnings: list[str] | None = None,
                 line_count: int = 0) -> None:
        self.session = session
        self.records = [] if records is None else records
        self.skipped = Counter() if skipped is None else skipped
        self.warnings = [] if warnings is None else warnings
        self.line_count = line_count

    def by_kind(self, kind: str) -> list[Record]:
        return [r for r in self.records if r.kind == kind]

    def index(self) -> dict[str, Record]:
        return {r.key: r for r in self.records}


# record fields that hold a name or an id (the texts, inputs and outputs are redacted
# where they are stored, after they are cut to a summary's length)
_NAME_FIELDS = ("message_id", "model", "stop_reason", "tool_use_id", "name", "prompt_id")
_SESSION_FIELDS = ("session_id", "agent_version", "cwd", "git_branch", "git_commit", "model")


def redact_names(t: Transcript) -> Transcript:
    """`t` with every name and id taken from the session file redacted in place
    (``Redactor.field``): the session's id, version, cwd, branch, commit and model, each
    record's key and parent, the model, tool name and ids in its data, the token usage
    and the line types counted as skipped. Ids get the rule the hook payload's
    ``session_id`` / ``tool_use_id`` get when a hook's payload is redacted, so a session
    recorded by its hooks and imported from its transcript still has one run id and one
    node per step."""
    r = Redactor()
    s = t.session
    for attr in _SESSION_FIELDS:
        value = getattr(s, attr)
        setattr(s, attr, r.field(attr, value) if isinstance(value, str) else None)
    for rec in t.records:
        rec.key = r.field("record_id", rec.key)
        if isinstance(rec.parent, str):
            rec.parent = r.field("record_id", rec.parent)
        for name in _NAME_FIELDS:
            value = rec.data.get(name)
            if isinstance(value, str):
                rec.data[name] = r.field(name, value)
        if isinstance(rec.data.get("usage"), dict):
            rec.data["usage"] = r.value(rec.data["usage"])
    t.skipped = Counter({r.field("line_type", k): n for k, n in t.skipped.items()})
    return t


def response_texts(records: list[Record]) -> dict[str, str]:
    """What the model wrote in each response: its ``assistant_text`` records joined, by
    the response's key (the output of its ``model.finished``)."""
    texts: dict[str, list[str]] = {}
    for rec in records:
        if rec.kind == ASSISTANT_TEXT and rec.parent:
            texts.setdefault(rec.parent, []).append(str(rec.get("text") or ""))
    return {key: "\n".join(parts) for key, parts in texts.items()}


def parse_ts(value: Any) -> int | None:
    """Milliseconds since the epoch from an ISO-8601 string or a number, else None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        try:
            v = float(value)
        except OverflowError:  # an integer of thousands of digits: no time
            return None
        if v != v or abs(v) > 1e17:  # NaN, infinite, or past any ms an event holds
            return None
        return int(v if v > 1e11 else v * 1000)
    if isinstance(value, str) and value:
        text = value.strip()
        if text.endswith("Z"):
            text = text[:-1] + "+00:00"
        try:
            return int(datetime.fromisoformat(text).timestamp() * 1000)
        except (ValueError, OverflowError, OSError):
            return None
    return None


def _zstd_stream(path: str) -> io.BufferedIOBase:
    """A readable decompressed stream of a .zst file, by whatever zstd is available."""
    with open(path, "rb") as fh:
        raw = fh.read()
    try:
        import zstandard  # type: ignore[import-not-found]
    except ImportError:
        zstandard = None
    if zstandard is not None:  # installed with langchain-core (langsmith needs it), say
        try:
            return io.BytesIO(zstandard.ZstdDecompressor().decompressobj().decompress(raw))
        except zstandard.ZstdError as exc:
            raise GaspError(f"{path}: not a valid zstd file ({exc})") from None
    try:
        from compression import zstd  # type: ignore[import-not-found]  # Python 3.14+

        return io.BytesIO(zstd.decompress(raw))
    except ImportError:
        pass
    exe = shutil.which("zstd")
    if exe is None:
        raise GaspError(
            f"{path}: reading .jsonl.zst needs the zstd extra "
            "(pip install 'git-gasp[zstd]') or the `zstd` program"
        )
    try:
        proc = subprocess.run([exe, "-dc"], input=raw, capture_output=True, check=False)
    except OSError as exc:
        raise GaspError(f"{path}: cannot run {exe}: {exc.strerror or exc}") from None
    if proc.returncode != 0:
        msg = proc.stderr.decode(errors="replace").strip().splitlines()
        raise GaspError(f"{path}: not a valid zstd file ({msg[-1] if msg else 'zstd failed'})")
    return io.BytesIO(proc.stdout)


def read_raw(path: str | os.PathLike) -> bytes:
    """The decompressed bytes of a session file (.jsonl, .jsonl.zst or .jsonl.gz)."""
    path = str(Path(path))
    try:
        if path.endswith(".zst"):
            return _zstd_stream(path).read()
        with open(path, "rb") as fh:
            data = fh.read()
        if path.endswith(".gz"):
            return gzip.decompress(data)
        return data
    except OSError as exc:
        raise GaspError(f"cannot read {path}: {exc.strerror or exc}") from None
    except EOFError:
        raise GaspError(f"{path}: truncated compressed file") from None


def iter_json_lines(data: bytes) -> Iterator[tuple[int, Any | None]]:
    """(1-based line number, parsed JSON or None when the line is not JSON), skipping blanks.
    Each line is read as ``base.outside.load_json`` reads an agent's JSON (invalid UTF-8
    and a lone surrogate, as Node writes a string cut mid-emoji, as U+FFFD; NaN and
    ±Infinity as null), so every string an import records can be written to the log."""
    for n, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            yield n, load_json(raw, "line")
        except FormatError:
            yield n, None


def output_text(content: Any) -> str:
    """Tool output content (a string or a list of content blocks) as one string."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict):
                if block.get("type") in ("text", "input_text", "output_text"):
                    parts.append(str(block.get("text", "")))
                elif block.get("type") == "image" or "image" in str(block.get("type", "")):
                    parts.append("[image]")
                else:
                    parts.append(json.dumps(block, sort_keys=True))
            else:
                parts.append(str(block))
        return "\n".join(parts)
    if isinstance(content, dict):
        if "stdout" in content or "stderr" in content:
            out = str(content.get("stdout") or "")
            err = str(content.get("stderr") or "")
            return out + ("\n" + err if out and err else err)
        return json.dumps(content, sort_keys=True)
    return str(content)
