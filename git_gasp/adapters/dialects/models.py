"""Model calls seen by an agent's own model events (Gemini CLI's BeforeModel/AfterModel,
OpenCode's finished assistant messages): ``model.called`` + ``model.finished`` naming
the model, with stable ids.

A ``ModelRequest`` opens the session's model call (``model.called``, running; its key
``model:<the payload's timestamp>``, so a replayed payload adds nothing); the
``ModelResponse`` that ends it (``gemini.model_response``: a chunk with a finish
reason) finishes it with the text's head as its summary, the token usage and the stop
reason; earlier chunks record nothing. A response whose request was not seen records
the call and its end at once. OpenCode reports a model call whole, once it finished
(``message.updated`` of an assistant message, `opencode.model_message`): it records
the call and its end at once, keyed ``model:<the message id>``. The open call is
kept in the session's progress (``HookSession.open_call``), so the hook processes need
nothing else. Both ends are written by the adapters' one model-call writer
(``SessionWriter.model_called`` / ``model_finished``); an agent whose transcript lists
its model calls instead (Qwen Code) has them recorded from it
(``session_close.record_model_turns``).
"""

from __future__ import annotations

from git_gasp.adapters.agent_hook_session import HookSession, _digest
from git_gasp.adapters.dialects import opencode
from git_gasp.adapters.dialects.gemini import model_response
from git_gasp.adapters.payloads import HookEvent
from git_gasp.adapters.records import parse_ts


def record(sess: HookSession, h: HookEvent) -> str:
    """Record the model event `h` in `sess`; say what was done."""
    if h.agent == opencode.AGENT:
        return _message(sess, h)
    if h.event == "ModelRequest":
        return "model call recorded" if _called(sess, h) else "model call seen already"
    end = model_response(h.raw)
    if end is None:
        return "model response chunk: not recorded"
    open_call = sess.open_call or {}
    if not open_call.get("key") or open_call.get("model") not in (None, h.model):
        _called(sess, h)  # its request was not seen: record the call now
        open_call = sess.open_call or {}
    sess.open_call = None
    if not sess.model_finished(open_call.get("id") or "", end["text"], usage=end["usage"],
                               stop_reason=end["stop_reason"],
                               at=parse_ts(h.raw.get("timestamp"))):
        return "model call finished already"
    return f"model call finished ({end['stop_reason']})"


def _called(sess: HookSession, h: HookEvent) -> bool:
    stamp = h.raw.get("timestamp")
    key = f"model:{stamp}" if isinstance(stamp, str) and stamp else f"model:{_digest(h.raw)}"
    sess.open_call = {"key": key, "id": sess.model_call_id(key), "model": h.model}
    return sess.model_called(key, h.model, started=parse_ts(stamp))


def _message(sess: HookSession, h: HookEvent) -> str:
    """Record OpenCode's finished assistant message `h` as one model call, once."""
    msg = opencode.model_message(h.raw)
    if msg is None:
        return "model message not finished: not recorded"
    key = f"model:{msg['id']}"
    sess.model_called(key, h.model, started=msg["started"], provider=msg["provider"])
    if not sess.model_finished(sess.model_call_id(key), "", usage=msg["usage"],
                               stop_reason=msg["stop_reason"], at=msg["ended"],
                               error=msg["error"]):
        return "model call finished already"
    return f"model call finished ({msg['stop_reason'] or 'no finish reason'})"
