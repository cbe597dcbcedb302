"""Gemini's ``models/<model>:generateContent`` and ``:streamGenerateContent`` (SSE with
``alt=sse``, else one JSON array).

Gemini's function calls may carry no id: a call is named by its place in the
conversation, ``fc<content index>.<n>`` (the n-th call of that content), and a
``functionResponse`` by the n-th response of the next content, so the call a response
asked for and the result a later request carries get the same id.
"""

from __future__ import annotations

import json
import re
from typing import Any

from git_gasp.proxy.dialect import Asked, Reply, ToolCall, ToolResult, last_turn

_MODEL = re.compile(r"/models/([^/:?]+)")


def _parts(content: Any) -> list:
    parts = content.get("parts") if isinstance(content, dict) else None
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


def asked(body: dict, path: str) -> Asked:
    """The model (from the path), stream flag, new user text, last turn's calls and
    their results."""
    m = _MODEL.search(path)
    a = Asked(model=m.group(1) if m else None,
              stream=":streamgeneratecontent" in path.lower())
    contents = [c for c in body.get("contents") or [] if isinstance(c, dict)]
    a.turn = len(contents)
    start = last_turn(contents, lambda c: c.get("role") == "model")
    for i, c in enumerate(contents[start:], start):
        n_call = n_result = 0
        for p in _parts(c):
            if isinstance(p.get("functionCall"), dict):
                fc = p["functionCall"]
                a.calls.append(ToolCall(str(fc.get("id") or f"fc{i}.{n_call}"),
                                        str(fc.get("name") or "unknown"), fc.get("args")))
                n_call += 1
            elif isinstance(p.get("functionResponse"), dict):
                fr = p["functionResponse"]
                resp = fr.get("response")
                text = json.dumps(resp, sort_keys=True, ensure_ascii=False) \
                    if not isinstance(resp, str) else resp
                err = isinstance(resp, dict) and "error" in resp and "output" not in resp
                a.results.append(ToolResult(str(fr.get("id") or f"fc{i - 1}.{n_result}"),
                                            text, err))
                n_result += 1
    if contents and contents[-1].get("role", "user") == "user":
        texts = [str(p["text"]) for p in _parts(contents[-1]) if isinstance(p.get("text"), str)]
        if texts and len(texts) == len(_parts(contents[-1])):
            a.prompt = "\n".join(texts)
    return a


def whole(r: Reply, body: Any) -> None:
    """A non-streamed response (or one chunk of a stream: they have the same shape)."""
    if isinstance(body, list):  # a stream without alt=sse: one JSON array of chunks
        for chunk in body:
            whole(r, chunk)
        return
    if not isinstance(body, dict):
        return
    if body.get("error"):
        err = body["error"]
        r.error = str(err.get("message") if isinstance(err, dict) else err)
        return
    r.model = body.get("modelVersion") or r.model
    if isinstance(body.get("usageMetadata"), dict):
        r.usage = dict(body["usageMetadata"])  # each chunk reports the totals so far
    for cand in (body.get("candidates") or [])[:1]:
        if not isinstance(cand, dict):
            continue
        r.stop_reason = cand.get("finishReason") or r.stop_reason
        for p in _parts(cand.get("content")):
            if isinstance(p.get("text"), str):
                r.text.append(p["text"])
            elif isinstance(p.get("functionCall"), dict):
                fc = p["functionCall"]
                r.calls.append(ToolCall(str(fc.get("id") or f"fc{r.turn}.{len(r.calls)}"),
                                        str(fc.get("name") or "unknown"), fc.get("args")))


def event(r: Reply, name: str | None, data: Any) -> None:
    """One server-sent event (a chunk) of a streamed response."""
    whole(r, data)
