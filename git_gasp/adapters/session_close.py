"""How a hook-recorded run ends: is its agent still running, did its last turn finish,
and the redacted transcript archived in the cold tier at its boundary commit.

- `agent_process` / `alive`: the agent process a hook runs under (the nearest ancestor
  that is not git, git-gasp or a shell), as ``{"pid", "start", "boot"}`` read from
  ``/proc`` (Linux); `alive` says True / False, or None where ``/proc`` cannot tell.
  A pid alone could have been reused: the process start time and the boot id must
  match too.
- `transcript_finished`: True when the session's transcript ends on a finished turn
  (Claude Code: a final assistant message, ``stop_reason`` ``end_turn``; Codex: a
  ``task_complete`` event) — a run closed without SessionEnd then takes the outcome
  of what was lifted in it, else ``abandoned``.
- `archive_transcript`: ``transcripts/<run id>.jsonl.gz``, every line redacted, gzip
  with mtime 0 (the same transcript gives the same bytes), attached to the run as a
  ``transcript`` artifact with its SHA-256; returns ``{"uri", "hash"}`` for the run's
  ``run.finished`` metadata.
- `record_model_turns`: the model turns no hook tells (which model answered, its token
  usage and stop reason), read at ``Stop`` and when the run closes from the transcript
  (Codex: the rollout; Qwen Code: its chat file) with the importer's reader and recorded
  through the importer's projection (`SessionWriter.model_call`): the same ``model.called`` +
  ``model.finished``, ids and causes as ``git gasp import`` of the same session. Each
  is caused by the event that recorded what the model answered: the tool result's
  ``tool.finished``, or the goal lifted from the prompt (else the run's start).
"""

from __future__ import annotations

import os
from hashlib import sha256
from pathlib import Path
from typing import Any

from git_gasp.adapters.agent_hook.agent_proc import agent_pid, proc_info
from git_gasp.adapters.claude_code import read_transcript
from git_gasp.adapters.claude_code import turn_finished as claude_turn_finished
from git_gasp.adapters.codex import read_rollout
from git_gasp.adapters.codex import turn_finished as codex_turn_finished
from git_gasp.adapters.dialects import gemini, qwen
from git_gasp.adapters.records import (
    MODEL_RESPONSE,
    USER_PROMPT,
    Record,
    Transcript,
    read_raw,
    response_texts,
)
from git_gasp.adapters.session_writer import SessionWriter, redacted_archive
from git_gasp.base.files import atomic_write
from git_gasp.redact.capture import load
from git_gasp.redact.redactor import Redactor
from git_gasp.runtime.state import AgentState

PROC = "/proc"
# how each agent's session file is read for its model turns (else Claude Code's reader)
TRANSCRIPT_READERS = {"codex": read_rollout, qwen.AGENT: qwen.read_transcript}
# whether a session file ends on a finished turn, by agent (else Claude Code's reading)
TURN_FINISHED = {"codex": codex_turn_finished, qwen.AGENT: qwen.turn_finished,
                 gemini.AGENT: gemini.turn_finished}


def _boot_id() -> str | None:
    try:
        with open(f"{PROC}/sys/kernel/random/boot_id", "rb") as fh:
            return fh.read(4096).decode("utf-8", "replace").strip() or None
    except OSError:
        return None


def agent_process(start_pid: int | None = None) -> dict | None:
    """The agent process this hook runs under, or `start_pid` names (itself or its
    nearest ancestor that is not a wrapper: `agent_proc.agent_pid`); None where /proc
    cannot say."""
    found = agent_pid(start_pid)
    if found is None:
        return None
    pid, name, started = found
    return {"pid": pid, "start": started, "boot": _boot_id(), "name": name}


def alive(proc: Any) -> bool | None:
    """Whether the agent process `proc` (from `agent_process`) still runs; None: unknown."""
    if not isinstance(proc, dict) or not isinstance(proc.get("pid"), int):
        return None
    if not Path(PROC).is_dir() or _boot_id() is None:
        return None
    if proc.get("boot") != _boot_id():
        return False  # the machine rebooted since
    info = proc_info(proc["pid"])
    return info is not None and info[2] == proc.get("start")


def locate_transcript(agent: str, session_id: str | None) -> str | None:
    """The session's transcript found by its id in the agent's store (for a payload whose
    transcript_path is unusable), or None: ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``
    ``/projects/*/<id>.jsonl``; ``$CODEX_HOME`` or ``~/.codex``
    ``/sessions/YYYY/MM/DD/rollout-*-<id>.jsonl[.zst]``."""
    if not session_id or "/" in session_id or "*" in session_id:
        return None
    home = Path(os.environ.get("HOME") or "~").expanduser()
    if agent == "codex":
        top = Path(os.environ.get("CODEX_HOME") or home / ".codex") / "sessions"
        found = sorted(top.glob(f"*/*/*/rollout-*{session_id}.jsonl*"))
    else:
        top = Path(os.environ.get("CLAUDE_CONFIG_DIR") or home / ".claude") / "projects"
        found = sorted(top.glob(f"*/{session_id}.jsonl"))
    return str(found[-1]) if found else None


def transcript_finished(agent: str, path: str | os.PathLike | None) -> bool:
    """True when the transcript at `path` ends on a finished turn (False if unreadable)."""
    if not path or not Path(path).is_file():
        return False
    try:
        data = read_raw(path)
    except Exception:  # noqa: BLE001 - a transcript we cannot read shows nothing
        return False
    return TURN_FINISHED.get(agent, claude_turn_finished)(data)


def archive_transcript(state: AgentState, run_id: str, agent: str, path: str | os.PathLike | None,
                       root: str | os.PathLike) -> dict | None:
    """Archive the redacted transcript at `path` for `run_id` and attach it to the run;
    return ``{"uri", "hash"}`` (None when there is no transcript to archive)."""
    if not path or not Path(path).is_file():
        return None
    if not load(root).transcripts:  # [capture] transcripts = false
        return None
    try:
        raw = read_raw(path)
    except Exception:  # noqa: BLE001 - gone or unreadable: the run closes without it
        return None
    archive = redacted_archive(raw, Redactor())
    rel = f"transcripts/{run_id}.jsonl.gz"
    digest = "sha256:" + sha256(archive).hexdigest()
    atomic_write(str(Path(root, rel)), archive, root=root, make_parents=True)
    if not _has_archive(state, run_id, rel, digest):
        state.attach_artifact(run_id, kind="transcript", uri=rel, hash=digest,
                              summary=f"{agent} session transcript (redacted)")
    return {"uri": rel, "hash": digest}


def _has_archive(state: AgentState, run_id: str, uri: str, digest: str) -> bool:
    node = state.graph.node(run_id)
    return node is not None and any(
        a.get("uri") == uri and a.get("hash") == digest for a in node.get("artifacts") or [])


def archived(state: AgentState, run_id: str) -> bool:
    """True when run `run_id` has a transcript artifact already."""
    node = state.graph.node(run_id)
    return node is not None and any(a.get("kind") == "transcript"
                                    for a in node.get("artifacts") or [])


def read_session_file(agent: str, path: str | os.PathLike) -> Transcript | None:
    """The parsed transcript (Claude Code, Qwen Code: its model responses) or rollout
    (Codex) at `path`; None when it cannot be read (gone, partial, compressed without a
    decompressor)."""
    read = TRANSCRIPT_READERS.get(agent, read_transcript)
    try:
        return read(path)
    except Exception:  # noqa: BLE001 - best effort: the model turns wait for the next look
        return None


def hook_key(rec: Record | None) -> str | None:
    """The key the hooks recorded `rec` under: a prompt by its prompt id (the
    transcript keys it by its line), anything else by its own key."""
    if rec is None:
        return None
    if rec.kind == USER_PROMPT and isinstance(rec.get("prompt_id"), str):
        return f"prompt:{rec.get('prompt_id')}"
    return rec.key


def record_model_turns(writer: SessionWriter, path: str | os.PathLike | None,
                       seen: int = 0) -> int:
    """Record every model response of the session file at `path` after its first `seen`
    (those an earlier run of a resumed session recorded) that the log does not hold yet,
    in the file's order; return how many responses the file holds (`seen` when there is
    no file to read)."""
    t = read_session_file(writer.agent, path) if path else None
    if t is None:
        return seen
    texts = response_texts(t.records)
    index = t.index()
    graph = writer.state.graph
    responses = t.by_kind(MODEL_RESPONSE)
    for rec in responses[seen:]:
        if graph.has_node(writer.model_call_id(rec.key)):
            continue
        parent = index.get(rec.parent or "")
        cause = writer.event_of.get(hook_key(parent) or "") or None  # None: the run's start
        writer.model_call(rec, texts.get(rec.key, ""), cause, t.session.model,
                          parent.ts_ms if parent is not None else None)
    return max(seen, len(responses))
