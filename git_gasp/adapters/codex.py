"""Codex rollouts (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl[.zst]``) → records.

Pinned to the format Codex 0.171.0 writes (``TESTED_VERSIONS``); other versions are
read with a warning. Each line is ``{"timestamp", "type", "payload"}``:

- ``session_meta`` → session facts (id, cwd, cli version, git commit and branch);
  ``turn_context`` → the model in use from then on, and the turn's id (a prompt's
  ``prompt_id``, as Codex's hooks name it).
- ``response_item`` ``message`` with role ``user`` → ``user_prompt`` only when the
  user typed it (provenance ``user``; harness-injected context such as
  ``<environment_context>`` is skipped); role ``assistant`` → ``assistant_text``;
  ``function_call`` / ``custom_tool_call`` / ``local_shell_call`` → ``tool_use``
  (JSON ``arguments`` decoded); ``function_call_output`` / ``custom_tool_call_output``
  → ``tool_result`` with the exit code from ``Process exited with code N`` or, when
  present, the ``item_completed`` ``CommandExecution`` event for the same call id.
- ``token_usage_record`` closes one model response: ``model_response`` keyed by its
  ``response_id`` with its usage, placed BEFORE the items it produced. (A response
  without one, as in older rollouts, is keyed ``resp@<line>`` and takes its usage
  from the next ``token_count`` event.)
- Codex has no parent field, so causation is positional: a response's parent is the
  record just before it (the prompt or tool result it answered), its items hang off
  it, and a tool result hangs off its tool call.
"""

from __future__ import annotations

import json
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
from git_gasp.redact.redactor import Redactor

AGENT = "codex"
TESTED_VERSIONS = ("0.171.0",)
_EXIT = re.compile(r"(?:Process exited with code|Exit code:?)\s*(-?\d+)")
_HARNESS_PREFIXES = ("<environment_context>", "<user_instructions>", "<permissions",
                     "# AGENTS.md instructions", "<skills_instructions>", "<turn_aborted>")
_CALLS = ("function_call", "custom_tool_call", "local_shell_call")
_OUTPUTS = ("function_call_output", "custom_tool_call_output")


def read_rollout(path: str | Path) -> Transcript:
    """Read a Codex rollout file (.jsonl or .jsonl.zst)."""
    return parse_rollout(read_raw(Path(path)))


def _prompt_provenance(payload: dict) -> str | None:
    meta = payload.get("internal_chat_message_metadata_passthrough")
    if isinstance(meta, dict):
        items = meta.get("content_item_metadata")
        if isinstance(items, list):
            kinds = {
                (i.get("provenance") or {}).get("type")
                for i in items if isinstance(i, dict) and isinstance(i.get("provenance"), dict)
            }
            if kinds:
                return "user" if kinds == {"user"} else "harness"
    return None


class _State:
    def __init__(self, t: Transcript) -> None:
        self.t = t
        self.model: str | None = None
        self.pending: list[Record] = []  # items of the model response being streamed
        self.last_input: str | None = None  # key of the last record a response answers
        self.exec_info: dict[str, dict] = {}  # call id -> CommandExecution item
        self.unfilled: Record | None = None  # last response still missing its usage
        self.turn_id: str | None = None  # the turn in progress (the hooks key prompts by it)

    def flush(self, response_id: str | None, usage: Any, ts: int | None, line: int) -> None:
        if not self.pending and response_id is None:
            return
        first = self.pending[0] if self.pending else None
        key = response_id or f"resp@{first.line if first else line}"
        resp = Record(MODEL_RESPONSE, key, self.last_input,
                      first.ts_ms if first else ts,
                      {"message_id": key, "model": self.model,
                       "usage": usage if isinstance(usage, dict) else None,
                       "stop_reason": None},
                      first.line if first else line)
        self.t.records.append(resp)
        for item in self.pending:
            item.parent = key
            if "message_id" in item.data:
                item.data["message_id"] = key
            self.t.records.append(item)
        if self.pending and self.pending[-1].kind == TOOL_USE:
            resp.data["stop_reason"] = "tool_use"
        elif self.pending:
            resp.data["stop_reason"] = "end_turn"
        self.pending = []
        self.last_input = key
        self.unfilled = resp if resp.data["usage"] is None else None


def parse_rollout(data: bytes) -> Transcript:
    """Parse rollout bytes into records; never fails on an unknown or bad line."""
    t = Transcript(SessionInfo(agent=AGENT))
    st = _State(t)
    version: str | None = None
    for n, obj in iter_json_lines(data):
        t.line_count = n
        if not isinstance(obj, dict) or not isinstance(obj.get("payload"), dict):
            t.skipped["<not json>" if obj is None else "<no payload>"] += 1
            continue
        kind, p = obj.get("type"), obj["payload"]
        ts = parse_ts(obj.get("timestamp"))
        if ts is not None:
            s = t.session
            s.started_ms = ts if s.started_ms is None else min(s.started_ms, ts)
            s.ended_ms = ts if s.ended_ms is None else max(s.ended_ms, ts)
        if kind == "session_meta":
            version = _meta(t.session, p) or version
        elif kind == "turn_context":
            if isinstance(p.get("turn_id"), str):
                st.turn_id = p["turn_id"]
            if isinstance(p.get("model"), str):
                st.model = p["model"]
                t.session.model = t.session.model or st.model
        elif kind == "response_item":
            _item(st, p, n, ts)
        elif kind == "token_usage_record":
            st.flush(p.get("response_id") if isinstance(p.get("response_id"), str) else None,
                     p.get("usage"), ts, n)
        elif kind == "event_msg":
            _event(st, p)
        else:
            t.skipped[str(kind)] += 1
    st.flush(None, None, None, t.line_count)
    # Exit codes the CommandExecution events reported win over text scraping.
    for rec in t.records:
        if rec.kind == TOOL_RESULT:
            info = st.exec_info.get(rec.data["tool_use_id"])
            if info and isinstance(info.get("exit_code"), int):
                rec.data["exit_code"] = info["exit_code"]
                rec.data["is_error"] = info["exit_code"] != 0
    if version is not None:
        t.session.agent_version = version
        if version not in TESTED_VERSIONS:
            t.warnings.append(
                f"rollout written by Codex {version}; this reader is tested with "
                f"{', '.join(TESTED_VERSIONS)} (the format is internal and may differ)"
            )
    return redact_names(t)


def _meta(s: SessionInfo, p: dict) -> str | None:
    sid = p.get("session_id") or p.get("id")
    if isinstance(sid, str):
        s.session_id = s.session_id or sid
    if isinstance(p.get("cwd"), str):
        s.cwd = s.cwd or p["cwd"]
    git = p.get("git")
    if isinstance(git, dict):
        s.git_commit = s.git_commit or git.get("commit_hash")
        s.git_branch = s.git_branch or git.get("branch")
    return p.get("cli_version") if isinstance(p.get("cli_version"), str) else None


def _item(st: _State, p: dict, n: int, ts: int | None) -> None:
    t = st.t
    ptype = p.get("type")
    if ptype == "message":
        role = p.get("role")
        text = output_text(p.get("content"))
        if role == "assistant":
            if text.strip():
                st.pending.append(Record(ASSISTANT_TEXT, str(p.get("id") or f"text:{n}"), None,
                                         ts, {"text": text, "message_id": None}, n))
            return
        if role == "user":
            prov = _prompt_provenance(p)
            harness = prov == "harness" or (
                prov is None and text.lstrip().startswith(_HARNESS_PREFIXES))
            if harness or not text.strip():
                t.skipped["response_item:message:harness"] += 1
                return
            st.flush(None, None, ts, n)
            key = str(p.get("id") or f"prompt:{n}")
            data = {"text": text, **({"prompt_id": st.turn_id} if st.turn_id else {})}
            t.records.append(Record(USER_PROMPT, key, st.last_input, ts, data, n))
            st.last_input = key
            return
        t.skipped[f"response_item:message:{role}"] += 1
    elif ptype in _CALLS:
        call_id = p.get("call_id") or p.get("id")
        if not isinstance(call_id, str):
            t.skipped[f"response_item:{ptype}:no-id"] += 1
            return
        if ptype == "function_call":
            raw = p.get("arguments")
            try:
                args = json.loads(raw) if isinstance(raw, str) else raw
            except ValueError:
                args = {"arguments": raw}
        elif ptype == "custom_tool_call":
            args = {"input": p.get("input")}
        else:
            args = p.get("action") if isinstance(p.get("action"), dict) else {}
        name = p.get("name") or ("shell" if ptype == "local_shell_call" else ptype)
        st.pending.append(Record(TOOL_USE, call_id, None, ts, {
            "tool_use_id": call_id, "name": str(name),
            "input": args if args is not None else {}, "message_id": None,
        }, n))
    elif ptype in _OUTPUTS:
        call_id = p.get("call_id")
        if not isinstance(call_id, str):
            t.skipped[f"response_item:{ptype}:no-id"] += 1
            return
        st.flush(None, None, ts, n)
        out, exit_code = _output(p.get("output"))
        key = f"result:{call_id}"
        t.records.append(Record(TOOL_RESULT, key, call_id, ts, {
            "tool_use_id": call_id, "output": out,
            "is_error": exit_code is not None and exit_code != 0, "exit_code": exit_code,
        }, n))
        st.last_input = key
    else:
        t.skipped[f"response_item:{ptype}"] += 1


def _output(raw: Any) -> tuple[str, int | None]:
    """The text of a tool output and the exit code it states, if any."""
    exit_code = None
    if isinstance(raw, str) and raw.startswith("{"):
        try:
            obj = json.loads(raw)  # older rollouts: {"output": ..., "metadata": {...}}
        except ValueError:
            obj = None
        if isinstance(obj, dict) and "output" in obj:
            meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
            if isinstance(meta.get("exit_code"), int):
                exit_code = meta["exit_code"]
            raw = obj.get("output")
    text = output_text(raw)
    if exit_code is None:
        m = _EXIT.search(text[:400])
        exit_code = int(m.group(1)) if m else None
    return _strip_header(text), exit_code


def _strip_header(text: str) -> str:
    """Drop Codex's 'Chunk ID / Wall time / …' preamble, keeping the command output."""
    if text.startswith("Chunk ID:") or text.startswith("Exit code:"):
        head, sep, body = text.partition("\nOutput:\n")
        if sep:
            return body
    return text


def _event(st: _State, p: dict) -> None:
    etype = p.get("type")
    if etype == "item_completed" and isinstance(p.get("item"), dict):
        item = p["item"]
        if item.get("type") == "CommandExecution" and isinstance(item.get("id"), str):
            st.exec_info[item["id"]] = item
    elif etype == "token_count":
        info = p.get("info") if isinstance(p.get("info"), dict) else {}
        usage = info.get("last_token_usage")
        if not isinstance(usage, dict):
            return
        if st.pending:  # no token_usage_record (older rollouts): this ends the response
            st.flush(None, usage, None, st.pending[0].line)
        elif st.unfilled is not None:
            st.unfilled.data["usage"] = usage
            st.unfilled = None
    elif etype == "exec_command_end" and isinstance(p.get("call_id"), str):
        st.exec_info[p["call_id"]] = p  # older rollouts: {call_id, exit_code, ...}


def turn_finished(data: bytes) -> bool:
    """True when the rollout ends on a finished turn: a ``task_complete`` event with no
    user prompt, tool call or new turn after it."""
    finished = False
    for _, obj in iter_json_lines(data):
        p = obj.get("payload") if isinstance(obj, dict) else None
        if not isinstance(p, dict):
            continue
        kind, ptype = obj.get("type"), p.get("type")
        if kind == "event_msg" and ptype == "task_complete":
            finished = True
        elif kind == "event_msg" and ptype in ("task_started", "turn_started", "user_message"):
            finished = False
        elif kind == "response_item" and ptype in (*_CALLS, *_OUTPUTS):
            finished = False
    return finished


def exit_codes(data: bytes) -> dict[str, list]:
    """Exit codes a rollout records, by call id: ``[code, exact]``, exact when the
    ``CommandExecution`` item said it (it wins over one scraped from the output). The
    call ids are redacted as the hook payload's ``tool_use_id`` is, so they match it."""
    field = Redactor().field
    codes: dict[str, list] = {}
    for line in data.split(b"\n"):
        if b"exit_code" not in line and b"call_output" not in line:
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        p = obj.get("payload") if isinstance(obj, dict) else None
        if not isinstance(p, dict):
            continue
        item = p.get("item") if isinstance(p.get("item"), dict) else None
        if item and isinstance(item.get("id"), str) and isinstance(item.get("exit_code"), int):
            codes[field("record_id", item["id"])] = [item["exit_code"], True]
        elif isinstance(p.get("call_id"), str) and p.get("type") in _OUTPUTS:
            code = _output(p.get("output"))[1]
            cid = field("record_id", p["call_id"])
            if code is not None and not (codes.get(cid) or [None, False])[1]:
                codes[cid] = [code, False]
    return codes


def exit_code_for(rollout: str | Path, call_id: str) -> int | None:
    """The exit code Codex recorded for `call_id` in a rollout, when it is there yet.

    Hooks call this: a Codex PostToolUse payload carries the output but no exit code.
    """
    try:
        data = read_raw(Path(rollout))
    except Exception:  # noqa: BLE001 - best effort: the rollout may be gone or partial
        return None
    needle = call_id.encode()
    code: int | None = None
    for line in data.split(b"\n"):
        if needle not in line:
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        p = obj.get("payload") if isinstance(obj, dict) else None
        if not isinstance(p, dict):
            continue
        item = p.get("item") if isinstance(p.get("item"), dict) else None
        if item and item.get("id") == call_id and isinstance(item.get("exit_code"), int):
            return item["exit_code"]
        if p.get("call_id") == call_id and p.get("type") in _OUTPUTS:
            code = _output(p.get("output"))[1]
    return code
