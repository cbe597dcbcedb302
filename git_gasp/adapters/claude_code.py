"""Claude Code transcripts (``~/.claude/projects/<project>/<session>.jsonl``) → records.

Pinned to the format Claude Code 2.1.328 writes (``TESTED_VERSIONS``); the format is
an internal of Claude Code, so a transcript from another version is still read, with
a warning. What is read (everything else is skipped and counted by line type):

- ``user`` lines whose ``message.content`` is a string or text blocks → ``user_prompt``
  (``isMeta`` / compact-summary lines are skipped); ``tool_result`` blocks in a user
  line → ``tool_result`` (``is_error`` from the block, exit code from ``Exit code N``).
- ``assistant`` lines: one API response may span several lines sharing
  ``message.id`` (one content block per line); they become ONE ``model_response``
  (model, usage and stop reason from the last line of the group), and each
  ``text`` block → ``assistant_text``, each ``tool_use`` block → ``tool_use``.
- causation follows ``parentUuid``: a record's parent is the nearest ancestor line
  that produced a record (attachments and system lines in between are skipped);
  a tool result's parent is its tool use; a response's blocks hang off the response.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from git_gasp.adapters.records import (
    ASSISTANT_TEXT,
    MODEL_RESPONSE,
    TOOL_RESULT,
    TOOL_USE,
    USER_PROMPT,
    Record,
    SessionInfo,
    Transcript,
    iter_json_lines,
    output_text,
    parse_ts,
    read_raw,
    redact_names,
)

AGENT = "claude-code"
TESTED_VERSIONS = ("2.1.328",)
_EXIT = re.compile(r"^(?:Error: )?Exit code (\d{1,9})(?!\d)")  # longer is no exit status


def read_transcript(path: str | Path) -> Transcript:
    """Read a Claude Code transcript file (.jsonl or .jsonl.zst)."""
    return parse_transcript(read_raw(Path(path)))


def parse_transcript(data: bytes) -> Transcript:
    """Parse transcript bytes into records; never fails on an unknown or bad line."""
    t = Transcript(SessionInfo(agent=AGENT))
    parent_of: dict[str, str | None] = {}  # line uuid -> parentUuid
    record_of: dict[str, str] = {}  # line uuid -> record key it produced
    responses: dict[str, Record] = {}  # message id -> model_response record
    pending_parent: list[tuple[Record, str | None]] = []  # resolve after all lines
    versions: set[str] = set()

    for n, obj in iter_json_lines(data):
        t.line_count = n
        if not isinstance(obj, dict):
            t.skipped["<not json>"] += 1
            continue
        kind = obj.get("type")
        uuid = obj.get("uuid") if isinstance(obj.get("uuid"), str) else None
        if uuid:
            parent_of[uuid] = obj.get("parentUuid") if isinstance(
                obj.get("parentUuid"), str) else None
        _session_facts(t.session, obj, versions)
        ts = parse_ts(obj.get("timestamp"))
        msg = obj.get("message")
        if kind == "assistant" and isinstance(msg, dict):
            _assistant(t, obj, msg, n, ts, uuid, responses, record_of, pending_parent)
        elif kind == "user" and isinstance(msg, dict):
            _user(t, obj, msg, n, ts, uuid, record_of, pending_parent)
        else:
            t.skipped[str(kind) if kind is not None else "<no type>"] += 1

    # Resolve parents along the parentUuid chain to the nearest record-producing line.
    for rec, parent_uuid in pending_parent:
        rec.parent = _nearest_record(parent_uuid, parent_of, record_of, rec.key)
    unknown = sorted(v for v in versions if v not in TESTED_VERSIONS)
    if unknown:
        t.warnings.append(
            f"transcript written by Claude Code {', '.join(unknown)}; this reader is tested "
            f"with {', '.join(TESTED_VERSIONS)} (the format is internal and may differ)"
        )
    if versions:
        t.session.agent_version = sorted(versions)[-1]
    return redact_names(t)


def _session_facts(s: SessionInfo, obj: dict, versions: set[str]) -> None:
    if isinstance(obj.get("version"), str) and obj.get("type") in ("user", "assistant"):
        versions.add(obj["version"])
    if s.session_id is None and isinstance(obj.get("sessionId"), str):
        s.session_id = obj["sessionId"]
    if s.cwd is None and isinstance(obj.get("cwd"), str):
        s.cwd = obj["cwd"]
    if s.git_branch is None and isinstance(obj.get("gitBranch"), str):
        s.git_branch = obj["gitBranch"] or None
    ts = parse_ts(obj.get("timestamp"))
    if ts is not None:
        s.started_ms = ts if s.started_ms is None else min(s.started_ms, ts)
        s.ended_ms = ts if s.ended_ms is None else max(s.ended_ms, ts)


def _nearest_record(uuid: str | None, parent_of: dict, record_of: dict, own: str) -> str | None:
    seen = 0
    while uuid is not None and seen < 1_000_000:
        key = record_of.get(uuid)
        if key is not None and key != own:
            return key
        uuid = parent_of.get(uuid)
        seen += 1
    return None


def _assistant(t, obj, msg, n, ts, uuid, responses, record_of, pending_parent) -> None:
    mid = msg.get("id") if isinstance(msg.get("id"), str) else None
    if mid is None:
        mid = f"line:{uuid or n}"
    resp = responses.get(mid)
    if resp is None:
        resp = Record(MODEL_RESPONSE, mid, None, ts, {
            "message_id": mid, "model": msg.get("model"), "usage": None,
            "stop_reason": None, "sidechain": bool(obj.get("isSidechain")),
        }, n)
        responses[mid] = resp
        t.records.append(resp)
        pending_parent.append((resp, obj.get("parentUuid")))
        if t.session.model is None and isinstance(msg.get("model"), str):
            t.session.model = msg["model"]
    # The last line of a response carries the final usage and stop reason.
    if isinstance(msg.get("usage"), dict):
        resp.data["usage"] = msg["usage"]
    if msg.get("stop_reason") is not None:
        resp.data["stop_reason"] = msg.get("stop_reason")
    if isinstance(msg.get("model"), str):
        resp.data["model"] = msg["model"]
    if uuid:
        record_of[uuid] = mid
    content = msg.get("content")
    blocks = content if isinstance(content, list) else (
        [{"type": "text", "text": content}] if isinstance(content, str) else [])
    for block in blocks:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text" and str(block.get("text", "")).strip():
            key = f"text:{uuid or n}:{len(t.records)}"
            t.records.append(Record(ASSISTANT_TEXT, key, mid, ts,
                                    {"text": block["text"], "message_id": mid}, n))
        elif btype in ("tool_use", "server_tool_use") and isinstance(block.get("id"), str):
            if any(r.key == block["id"] for r in t.records[-8:]):
                continue  # the same block repeated on a later line of the response
            t.records.append(Record(TOOL_USE, block["id"], mid, ts, {
                "tool_use_id": block["id"], "name": str(block.get("name", "")),
                "input": block.get("input") if block.get("input") is not None else {},
                "message_id": mid,
            }, n))
        else:
            t.skipped[f"assistant:{btype}"] += 1


def _user(t, obj, msg, n, ts, uuid, record_of, pending_parent) -> None:
    content = msg.get("content")
    if obj.get("isMeta") or obj.get("isCompactSummary") or obj.get("isVisibleInTranscriptOnly"):
        t.skipped["user:meta"] += 1
        return
    if isinstance(content, str):
        _prompt(t, content, n, ts, uuid, obj, record_of, pending_parent)
        return
    if not isinstance(content, list):
        t.skipped["user:empty"] += 1
        return
    texts = []
    results = False  # a message carrying tool results is not a prompt, whatever its text
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str):
            results = True
            tid = block["tool_use_id"]
            out = output_text(block.get("content"))
            is_error = bool(block.get("is_error"))
            m = _EXIT.match(out)
            exit_code = int(m.group(1)) if m else None
            rec = Record(TOOL_RESULT, f"result:{tid}", tid, ts, {
                "tool_use_id": tid, "output": out, "is_error": is_error,
                "exit_code": exit_code,
            }, n)
            t.records.append(rec)
            if uuid:
                record_of[uuid] = rec.key
        elif block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        else:
            t.skipped[f"user:{block.get('type')}"] += 1
    if texts and not results:
        _prompt(t, "\n".join(texts), n, ts, uuid, obj, record_of, pending_parent)


def _prompt(t, text: str, n, ts, uuid, obj: dict[str, Any], record_of, pending_parent) -> None:
    if not text.strip() or text.lstrip().startswith(("<command-name>", "<local-command-")):
        t.skipped["user:command"] += 1
        return
    key = uuid or f"prompt:{n}"
    data: dict[str, Any] = {"text": text}
    if isinstance(obj.get("promptId"), str):
        data["prompt_id"] = obj["promptId"]  # what the hooks key the prompt by
    rec = Record(USER_PROMPT, key, None, ts, data, n)
    t.records.append(rec)
    pending_parent.append((rec, obj.get("parentUuid")))
    if uuid:
        record_of[uuid] = key


def turn_finished(data: bytes) -> bool:
    """True when the transcript ends on a finished turn: its last user or assistant line
    is an assistant message that stopped with ``end_turn`` (no tool call pending)."""
    finished = False
    for _, obj in iter_json_lines(data):
        if not isinstance(obj, dict) or obj.get("isSidechain"):
            continue
        msg = obj.get("message")
        if obj.get("type") == "assistant" and isinstance(msg, dict):
            finished = msg.get("stop_reason") == "end_turn"
        elif obj.get("type") == "user" and isinstance(msg, dict) and not obj.get("isMeta"):
            finished = False
    return finished
