"""The model turns of a hook-recorded session, taken from the agent's own session file.

No hook says which model answered or what it cost: Claude Code's transcript and Codex's
rollout do, on every turn. At ``Stop`` and when the run closes (``SessionEnd``, the
next session, ``reconcile``) the live hooks read that file with the importer's reader
and record each model response not yet in the log through the importer's projection
(`SessionWriter.model_call`): the same ``model.called`` + ``model.finished``, with the
same ids, model, token usage, stop reason and output, as ``git gasp import`` of the
same session writes. Each is caused by the event that recorded what the model answered:
the tool result's ``tool.finished``, or the goal lifted from the prompt (else the
run's start).
"""

from __future__ import annotations

import os

from git_gasp.adapters.claude_code import read_transcript
from git_gasp.adapters.codex import read_rollout
from git_gasp.adapters.records import (
    MODEL_RESPONSE,
    USER_PROMPT,
    Record,
    Transcript,
    response_texts,
)
from git_gasp.adapters.session_writer import SessionWriter


def read_session_file(agent: str, path: str | os.PathLike) -> Transcript | None:
    """The parsed transcript (Claude Code) or rollout (Codex) at `path`; None when it
    cannot be read (gone, partial, compressed without a decompressor)."""
    read = read_rollout if agent == "codex" else read_transcript
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
        if graph.has_node(writer.stable_id("model_call", rec.key)):
            continue
        parent = hook_key(index.get(rec.parent or ""))
        cause = writer.event_of.get(parent or "") or None  # None: the run's start
        writer.model_call(rec, texts.get(rec.key, ""), cause, t.session.model)
    return max(seen, len(responses))
