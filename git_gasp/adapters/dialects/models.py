"""Model calls seen by an agent's own model hooks (Gemini CLI's BeforeModel/AfterModel):
``model.called`` + ``model.finished`` naming the model, with stable ids.

A ``ModelRequest`` opens the session's model call (``model.called``, running; its key
``model:<the payload's timestamp>``, so a replayed payload adds nothing); the
``ModelResponse`` that ends it (``gemini.model_response``: a chunk with a finish
reason) finishes it with the text's head as its summary, the token usage and the stop
reason; earlier chunks record nothing. A response whose request was not seen records
the call and its end at once. The open call is kept in the session's progress
(``HookSession.open_model_call``), so the hook processes need nothing else.

An agent whose hooks see no model call but whose transcript lists them (Qwen Code:
``qwen.model_calls``) has them recorded at each Stop (`from_transcript`): each response
not recorded yet becomes its ``model.called`` + ``model.finished`` (key ``model:<the
line's uuid>``), timed by the transcript.
"""

from __future__ import annotations

from typing import Any

from git_gasp.adapters.dialects import qwen
from git_gasp.adapters.dialects.gemini import model_response
from git_gasp.adapters.hook_session import HookSession, _digest
from git_gasp.adapters.payloads import HookEvent
from git_gasp.adapters.records import parse_ts, read_raw
from git_gasp.runtime.state import create_node, relate, update_node

PROVIDERS = {"gemini": "google"}
TRANSCRIPT_CALLS = {qwen.AGENT: qwen.model_calls}  # agents whose transcript lists them
SUMMARY = 2000


def record(sess: HookSession, h: HookEvent) -> str:
    """Record the model event `h` in `sess`; say what was done."""
    if h.event == "ModelRequest":
        return "model call recorded" if _called(sess, h) else "model call seen already"
    end = model_response(h.raw)
    if end is None:
        return "model response chunk: not recorded"
    open_call = sess.open_model_call or {}
    if not open_call.get("key") or open_call.get("model") not in (None, h.model):
        _called(sess, h)  # its request was not seen: record the call now
        open_call = sess.open_model_call or {}
    sess.open_model_call = None
    return _finished(sess, open_call, end, parse_ts(h.raw.get("timestamp")))


def _key(h: HookEvent) -> str:
    stamp = h.raw.get("timestamp")
    return f"model:{stamp}" if isinstance(stamp, str) and stamp else f"model:{_digest(h.raw)}"


def from_transcript(sess: HookSession) -> int:
    """Record the model calls of `sess`'s transcript not recorded yet (agents of
    TRANSCRIPT_CALLS); return how many."""
    reader = TRANSCRIPT_CALLS.get(sess.agent)
    path = sess.transcript() if reader is not None else None
    if not path:
        return 0
    try:
        calls = reader(read_raw(path))
    except Exception:  # noqa: BLE001 - best effort: the transcript may be gone or partial
        return 0
    done = 0
    for call in calls:
        key = f"model:{call['key']}"
        if _new_call(sess, key, call["model"], call["at"]):
            end = {"text": call["text"], "usage": call["usage"],
                   "stop_reason": "tool_calls" if call["tool_calls"] else "stop"}
            _finished(sess, {"id": sess.stable_id("model_call", key), "started": call["at"]},
                      end, call["at"])
            done += 1
    return done


def _called(sess: HookSession, h: HookEvent) -> bool:
    key = _key(h)
    started = parse_ts(h.raw.get("timestamp"))
    sess.open_model_call = {"key": key, "id": sess.stable_id("model_call", key), "model": h.model,
                       "started": started}
    return _new_call(sess, key, h.model, started)


def _new_call(sess: HookSession, key: str, model: str | None, started: int | None) -> bool:
    """model.called for `key` unless it is recorded already (a replay); True if new."""
    mid = sess.stable_id("model_call", key)
    if sess.state.graph.has_node(mid):
        return False
    model = model or "unknown"
    provider = PROVIDERS.get(sess.agent)
    meta = sess._src(key)
    payload: dict[str, Any] = {"id": mid, "run_id": sess.run_id, "model": model,
                               "metadata": meta}
    props: dict[str, Any] = {"model": model, "run_id": sess.run_id, "status": "running",
                             "metadata": meta}
    if provider:
        payload["provider"] = props["provider"] = provider
    if started is not None:
        props["started_ts_ms"] = started
    sess._emit("model.called", payload, [create_node(mid, "model_call", props),
                                          relate(mid, "produced_by", sess.run_id)], None)
    return True


def _finished(sess: HookSession, call: dict, end: dict, at: int | None) -> str:
    mid = call.get("id")
    node = sess.state.graph.node(mid) if mid else None
    if node is None or node["props"].get("status") != "running":
        return "model call finished already"
    summary = sess.r.text(end["text"])[:SUMMARY]
    started = call.get("started")
    duration = max(0, at - started) if at is not None and started is not None else None
    meta = {"stop_reason": end["stop_reason"]}
    extra = {k: v for k, v in (("usage", end["usage"]), ("duration_ms", duration))
             if v is not None}
    payload = {"id": mid, "run_id": sess.run_id, "output_summary": summary,
               "success": True, **extra, "metadata": meta}
    props = {"status": "succeeded", "success": True, "output_summary": summary or None,
             **extra, "outcome_metadata": meta}
    if at is not None:
        props["finished_ts_ms"] = at
    sess._emit("model.finished", payload, [update_node(mid, props)],
               sess.state.creator_of(mid) or None)
    return f"model call finished ({end['stop_reason']})"
