"""One model-call writer for every adapter: the same model turn recorded from a
transcript (``SessionWriter.model_call``, as import and the hooks at Stop do), from an
agent's model hooks (Gemini CLI's BeforeModel/AfterModel) and by the proxy gives
``model.called`` + ``model.finished`` of one shape: the same payload fields and node
props, the model's vendor as ``provider``, usage, stop reason and duration, the run
naming its model(s), the finish caused by its call."""

from __future__ import annotations

import json

from git_gasp.adapters.agent_hook_session import HookSession
from git_gasp.adapters.dialects import models as hook_models
from git_gasp.adapters.live import gasp_dir
from git_gasp.adapters.payloads import HookEvent
from git_gasp.adapters.records import MODEL_RESPONSE, Record
from git_gasp.adapters.session_writer import SessionWriter
from git_gasp.attribution.agent_trace import _models
from git_gasp.proxy.dialect import ANTHROPIC
from git_gasp.proxy.exchange import Exchange
from git_gasp.proxy.recorder import model_call
from git_gasp.runtime import AgentState

MODEL = "claude-opus-4-5"
USAGE = {"input_tokens": 12, "output_tokens": 7}
TEXT = "Fixed add()."
T0, T1 = 1_765_000_000_000, 1_765_000_000_250  # the turn's start and end (ms)


def _transcript_turn(st: AgentState) -> str:
    st.start_run("transcript", run_id="run_claude-code.s1")
    writer = SessionWriter(st, "claude-code", "s1", "run_claude-code.s1")
    rec = Record(MODEL_RESPONSE, "msg_1", None, T1,
                 {"message_id": "msg_1", "model": MODEL, "usage": USAGE,
                  "stop_reason": "end_turn"})
    writer.model_call(rec, TEXT, None, started=T0)
    st.finish_run("completed")
    return writer.model_call_id("msg_1")


def _hook_turn(st: AgentState, root: str) -> str:
    sess = HookSession(st, "gemini", "s2", gasp_dir(root), cwd=root)
    sess.ensure_run(HookEvent("gemini", "SessionStart", "s2", cwd=root, model=MODEL))
    stamp, end = "2025-12-06T05:46:40.000Z", "2025-12-06T05:46:40.250Z"
    request = {"hook_event_name": "BeforeModel", "timestamp": stamp,
               "llm_request": {"model": MODEL}}
    response = dict(request, hook_event_name="AfterModel", timestamp=end, llm_response={
        "text": TEXT, "candidates": [{"finishReason": "end_turn"}], "usageMetadata": USAGE})
    hook_models.record(sess, HookEvent("gemini", "ModelRequest", "s2", model=MODEL,
                                       raw=request))
    hook_models.record(sess, HookEvent("gemini", "ModelResponse", "s2", model=MODEL,
                                       raw=response))
    st.finish_run("completed")
    return sess.model_call_id(f"model:{stamp}")


def _proxy_turn(st: AgentState, root: str) -> str:
    sess = HookSession(st, "proxy", "s3", gasp_dir(root), cwd=root, recorded_by="proxy")
    sess.ensure_run(HookEvent("proxy", "SessionStart", "s3", cwd=root, model=MODEL))
    body = {"model": MODEL, "messages": [{"role": "user", "content": "fix add"}]}
    ex = Exchange(ANTHROPIC, "POST", "/v1/messages", None, json.dumps(body).encode())
    ex.status, ex.outcome, ex.duration_ms = 200, "completed", T1 - T0
    ex.reply.model, ex.reply.usage, ex.reply.stop_reason = MODEL, USAGE, "end_turn"
    ex.reply.text = [TEXT]
    key = model_call(sess, ex, MODEL)
    started = st.graph.node(sess.run_id)["props"]["metadata"]
    assert started["recorded_by"] == "proxy"  # not the hooks: HookSession's parameter
    st.finish_run("completed")
    return sess.model_call_id(key)


def _shape(st: AgentState, mid: str) -> dict:
    """What a model call's events hold: field names, and the values a turn decides."""
    events = st.events()
    by_id = {e.id: e for e in events}
    called = next(e for e in events if e.kind == "model.called" and e.payload["id"] == mid)
    done = next(e for e in events if e.kind == "model.finished" and e.payload["id"] == mid)
    ops = next(e.payload for e in events if e.causation_id == called.id
               and e.kind == "state.ops_applied")
    node = st.graph.node(mid)
    run = st.graph.node(called.payload["run_id"])
    return {
        "called": sorted(called.payload), "finished": sorted(done.payload),
        "called_meta": sorted(called.payload["metadata"]),
        "props": sorted(node["props"]), "ops": [next(iter(op)) for op in ops],
        "values": {k: done.payload.get(k) for k in ("usage", "stop_reason", "success",
                                                     "output_summary", "duration_ms")},
        "model": (called.payload["model"], node["props"]["model"]),
        "run_models": (run["props"]["model"], run["props"]["models"]),
        "finish_cause": by_id[done.causation_id].kind,
        "source_keys": sorted(called.payload["metadata"]["source"]),
    }


def test_the_three_callers_record_one_model_turn_alike(agent):
    root = str(agent)
    with AgentState.open(agent, "tester") as st:
        mids = {"transcript": _transcript_turn(st), "hooks": _hook_turn(st, root),
                "proxy": _proxy_turn(st, root)}
        shapes = {name: _shape(st, mid) for name, mid in mids.items()}
        providers = {name: st.graph.node(mid)["props"]["provider"] for name, mid in mids.items()}
        model_ids = _models(st)  # export agent-trace's contributor.model_id, per run
    assert providers == {"transcript": "anthropic", "hooks": "google", "proxy": "anthropic"}
    assert model_ids == {"run_claude-code.s1": f"anthropic/{MODEL}",
                         "run_gemini.s2": f"google/{MODEL}", "run_proxy.s3": f"anthropic/{MODEL}"}
    first = shapes["transcript"]
    assert first["values"] == {"usage": USAGE, "stop_reason": "end_turn", "success": True,
                               "output_summary": TEXT, "duration_ms": T1 - T0}
    assert first["model"] == (MODEL, MODEL) and first["run_models"] == (MODEL, [MODEL])
    assert first["ops"] == ["CreateNode", "CreateRelation", "UpdateNode"]  # the run names its model
    assert first["finish_cause"] == "model.called"
    assert {"provider", "model", "run_id", "metadata"} <= set(first["called"])
    for name in ("hooks", "proxy"):
        shape = dict(shapes[name])
        if name == "proxy":  # the proxy alone sees the request's text, the HTTP outcome
            assert shape["props"] == sorted([*first["props"], "input_summary",
                                             "outcome_metadata"])
            shape["props"] = first["props"]
            assert set(shape["called_meta"]) - {"api", "path", "stream", "request_bytes"} \
                == set(first["called_meta"])
            shape["called_meta"] = first["called_meta"]
        assert shape == first, name
