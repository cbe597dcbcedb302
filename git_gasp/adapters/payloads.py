"""Hook payloads of Claude Code and Codex (JSON on stdin) → one neutral :class:`HookEvent`.

Both agents send ``session_id``, ``transcript_path``, ``cwd`` and ``hook_event_name``;
tool hooks add ``tool_name``, ``tool_input``, ``tool_use_id`` and, after the call,
``tool_response`` (PostToolUse) or ``error`` (Claude's PostToolUseFailure). Measured
differences (Claude Code 2.1.328, Codex 0.171.0):

- Claude's ``tool_response`` is an object (Bash: ``stdout``/``stderr``/``interrupted``;
  Write/Edit: the file change); a failing command fires ``PostToolUseFailure`` with
  ``error`` = ``"Exit code N\\n…"``.
- Codex's ``tool_response`` is the command output as a string and a failing command
  still fires ``PostToolUse``: the exit code is not in the payload (the hook handler
  looks it up in the rollout, see ``codex.exit_code_for``). Codex names its shell tool
  ``Bash`` in hooks (``exec_command`` in the rollout) and adds ``model``/``turn_id``.
"""

from __future__ import annotations

import re
from typing import Any

from git_gasp.adapters.dialects import copilot, cursor, gemini, opencode, qwen
from git_gasp.adapters.dialects.table import MODEL_EVENTS
from git_gasp.adapters.records import output_text
from git_gasp.base.agentnames import AGENTS
from git_gasp.base.errors import GaspError
from git_gasp.base.outside import load_json
from git_gasp.base.record import Record as Value

HOOK_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "SessionEnd",
)

# What of one payload string is ever stored: the hook keeps at most the first 2,000
# characters of a tool input string and the first 1,000 / last 3,000 of an output
# (``agent_hook_session``), so a payload is cut to this much before it is redacted.
TRIM_HEAD = TRIM_TAIL = 8192
TRIM_ITEMS = 200  # of a list: the first and the last half
TRIM_DEPTH = 32  # containers nested deeper are cut to TRIM_MARK (the log allows 127 levels)
TRIM_MARK = "\n…\n"
_CUT_WINDOW = 1024  # a cut moves to whitespace within this many characters
_EXIT = re.compile(r"^(?:Error: )?Exit code (\d{1,9})(?!\d)")  # longer is no exit status


class HookEvent(Value):
    """One hook invocation, agent-neutral."""

    FIELDS = ("agent", "event", "session_id", "cwd", "transcript_path", "prompt", "tool_name",
              "tool_input", "tool_use_id", "output", "is_error", "exit_code", "last_message",
              "reason", "model", "raw")

    def __init__(self, agent: str, event: str, session_id: str, cwd: str | None = None,
                 transcript_path: str | None = None, prompt: str | None = None,
                 tool_name: str | None = None, tool_input: Any = None,
                 tool_use_id: str | None = None, output: str | None = None,
                 is_error: bool | None = None, exit_code: int | None = None,
                 last_message: str | None = None, reason: str | None = None,
                 model: str | None = None, raw: dict | None = None) -> None:
        self.agent = agent
        self.event = event
        self.session_id = session_id
        self.cwd = cwd
        self.transcript_path = transcript_path
        self.prompt = prompt
        self.tool_name = tool_name
        self.tool_input = tool_input
        self.tool_use_id = tool_use_id
        self.output = output  # tool output (PostToolUse) or error text (failure)
        self.is_error = is_error
        self.exit_code = exit_code
        self.last_message = last_message
        self.reason = reason  # SessionStart source / SessionEnd reason
        self.model = model
        self.raw = {} if raw is None else raw


def detect_agent(payload: dict) -> str:
    """Which agent sent `payload` (its transcript path says it; Codex adds `turn_id`)."""
    path = str(payload.get("transcript_path") or "")
    if "/.codex/" in path or "/rollout-" in path or "codex" in path.rsplit("/", 1)[0]:
        return "codex"
    if "/.claude/" in path:
        return "claude-code"
    if "/.gemini/" in path:
        return "gemini"
    if "/.qwen/" in path:
        return "qwen-code"
    if "/.factory/" in path:
        return "droid"
    if "conversation_id" in payload and "workspace_roots" in payload:
        return "cursor"
    if "turn_id" in payload or payload.get("permission_mode") == "bypassPermissions":
        return "codex"
    return "claude-code"


NORMALIZE = {gemini.AGENT: gemini.normalize, qwen.AGENT: qwen.normalize,
             copilot.AGENT: copilot.normalize, cursor.AGENT: cursor.normalize,
             opencode.AGENT: opencode.normalize}


def parse_hook_payload(data: Any, agent: str | None = None) -> HookEvent:
    """Parse one hook payload: its JSON, or its bytes (or text) as `decode_payload` reads
    them; raises GaspError (one line) when it is not one of the events git-gasp records."""
    payload = data
    if isinstance(data, (bytes, str)):
        payload = decode_payload(data if isinstance(data, bytes) else data.encode(
            "utf-8", "surrogatepass"))
    if not isinstance(payload, dict):
        raise GaspError("hook payload is not a JSON object")
    if agent is not None and agent not in AGENTS:
        raise GaspError(f"unknown agent {agent!r} (expected one of {', '.join(AGENTS)})")
    normalize = NORMALIZE.get(agent or detect_agent(payload))
    if normalize is not None:  # the agent's own names and fields (``dialects.py``)
        payload = normalize(payload)
    event = payload.get("hook_event_name")
    if not isinstance(event, str) or not event:
        raise GaspError("hook payload has no hook_event_name")
    if event not in HOOK_EVENTS + MODEL_EVENTS:
        raise GaspError(f"hook payload's event {event[:80]!r} is not one git-gasp records "
                        f"({', '.join(HOOK_EVENTS)})")
    sid = payload.get("session_id")
    if not isinstance(sid, str) or not sid:
        raise GaspError("hook payload has no session_id")
    h = HookEvent(agent or detect_agent(payload), event, sid, raw=payload)
    h.cwd = _str(payload.get("cwd"))
    h.transcript_path = _str(payload.get("transcript_path"))
    h.model = _str(payload.get("model"))
    if event == "UserPromptSubmit":
        h.prompt = _str(payload.get("prompt")) or ""
    if event in ("PreToolUse", "PostToolUse", "PostToolUseFailure"):
        h.tool_name = _str(payload.get("tool_name")) or "unknown"
        h.tool_input = payload.get("tool_input")
        h.tool_use_id = _str(payload.get("tool_use_id"))
    if event == "PostToolUse":
        resp = payload.get("tool_response")
        h.output = response_text(resp)
        h.is_error = False
        if isinstance(resp, dict):
            if resp.get("interrupted") is True or resp.get("is_error") is True:
                h.is_error = True
            code = resp.get("exit_code", resp.get("exitCode"))
            if isinstance(code, int) and not isinstance(code, bool):
                h.exit_code = code
                h.is_error = code != 0
        if h.agent == "codex":
            h.is_error = None  # unknown from the payload alone; the handler resolves it
    elif event == "PostToolUseFailure":
        h.output = output_text(payload.get("error"))
        h.is_error = True
        m = _EXIT.match(h.output)
        code = payload.get("exit_code")  # a dialect's, read from the error's text
        h.exit_code = int(m.group(1)) if m else code if type(code) is int else None
    elif event == "Stop":
        h.last_message = _str(payload.get("last_assistant_message"))
    elif event == "SessionStart":
        h.reason = _str(payload.get("source"))
    elif event == "SessionEnd":
        h.reason = _str(payload.get("reason"))
    return h


def response_text(resp: Any) -> str:
    """What a tool printed, from its hook ``tool_response``: a string as it is, Bash's
    ``stdout``/``stderr``; a file tool's object (Claude Code's Write/Edit: the file
    again, its patch) as the line a person reads, ``created PATH`` / ``updated PATH``
    (the contents go beside it, in the observation's detail, as the capture rules say);
    Read's file text, Glob's file names; any other object as its JSON."""
    if not isinstance(resp, dict) or "stdout" in resp or "stderr" in resp:
        return output_text(resp)
    path = resp.get("filePath")
    if isinstance(path, str):
        if resp.get("type") == "create":
            return f"created {path}"
        return f"updated {path}"
    file = resp.get("file")
    if isinstance(file, dict) and isinstance(file.get("content"), str):
        return file["content"]  # Read
    names = resp.get("filenames")
    if isinstance(names, list) and all(isinstance(n, str) for n in names):
        return resp.get("content") if isinstance(resp.get("content"), str) else "\n".join(names)
    return output_text(resp)


def decode_payload(data: bytes) -> Any:
    """The JSON of a queued payload, whatever its bytes: read by ``base.outside.load_json``
    (invalid UTF-8 and lone surrogates read as U+FFFD, NaN and ±Infinity as null), so what
    is redacted and recorded is valid text; GaspError when it is not JSON at all."""
    return load_json(data, "hook payload")


def trim_payload(value: Any) -> Any:
    """A copy of the JSON `value` cut to what the hook can store: each long string to its
    head and tail (cut at whitespace when there is some nearby, so a secret is seldom
    split), each long list to its first and last items, each key to TRIM_HEAD
    characters and what is nested deeper than TRIM_DEPTH to TRIM_MARK. Iterative."""
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any, int]] = [(root, 0, value, 0)]
    while stack:
        parent, key, src, depth = stack.pop()
        if isinstance(src, str):
            parent[key] = _trim_str(src)
        elif isinstance(src, (dict, list)) and depth >= TRIM_DEPTH:
            parent[key] = TRIM_MARK.strip()
        elif isinstance(src, dict):
            out: dict = {}
            parent[key] = out
            for k, v in src.items():
                k = k[:TRIM_HEAD] if isinstance(k, str) else k
                out[k] = None
                stack.append((out, k, v, depth + 1))
        elif isinstance(src, list):
            items = src if len(src) <= TRIM_ITEMS else (
                src[: TRIM_ITEMS // 2] + src[-(TRIM_ITEMS // 2):])
            lst: list = [None] * len(items)
            parent[key] = lst
            for i, v in enumerate(items):
                stack.append((lst, i, v, depth + 1))
        else:
            parent[key] = src
    return root[0]


def _trim_str(text: str) -> str:
    if len(text) <= TRIM_HEAD + TRIM_TAIL + len(TRIM_MARK):
        return text
    head_end = TRIM_HEAD
    ws = max(text.rfind(c, TRIM_HEAD - _CUT_WINDOW, TRIM_HEAD) for c in " \n\t")
    if ws > 0:
        head_end = ws
    tail_start = len(text) - TRIM_TAIL
    found = [i for i in (text.find(c, tail_start, tail_start + _CUT_WINDOW) for c in " \n\t")
             if i >= 0]
    if found:
        tail_start = min(found) + 1
    return text[:head_end] + TRIM_MARK + text[tail_start:]


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
