"""Bad input and faults: relayed untouched, recorded as failures, never a crash; a client
that leaves mid-stream leaves a closed, aborted model call; what is stored is bounded,
what is forwarded never."""

from __future__ import annotations

import asyncio
import json

import aiohttp
import pytest

from git_gasp.proxy import exchange, recorder
from git_gasp.proxy.recorder import Recorder
from tests.proxy.recording import domain, post, record
from tests.proxy.upstream import (
    JSON_HEADERS,
    SSE_HEADERS,
    Upstream,
    anthropic_stream,
    chat_whole,
    sse,
    started,
)
from tests.testing.run import gasp


def _failures(evs) -> list[str]:
    return [e.payload["summary"] for e in evs if e.kind == "observation.created"
            and e.payload["metadata"].get("failure")]


def _finished(evs) -> list[dict]:
    return [e.payload for e in evs if e.kind == "model.finished"]


def test_a_request_that_is_not_json_is_forwarded_untouched_and_recorded_as_a_failure(agent):
    bad = b"\xff\xfe not json {"
    got = []

    def reply(method, path, body):
        got.append(body)
        return 200, JSON_HEADERS, chat_whole()

    async def client(url):
        first = await post(url + "/v1/chat/completions", bad)
        second = await post(url + "/v1/messages", b"[1, 2]")
        return first, second

    (first, second), _closed = record(agent, reply, client)
    assert got == [bad, b"[1, 2]"]
    assert first == second == chat_whole()[0]
    evs = domain(agent)
    fails = _failures(evs)
    assert any("request body is not JSON (13 bytes)" in f for f in fails), fails
    assert any("not a JSON object" in f for f in fails), fails
    assert len(_finished(evs)) == 2
    assert gasp(agent, "check").returncode == 0


def test_a_response_that_is_not_json_passes_and_is_recorded_as_a_failure(agent):
    html = b"<html>502 Bad Gateway</html>"
    events = [sse("message_start", {"type": "message_start", "message": {"model": "m"}}),
              b"event: content_block_delta\ndata: {not json\n\n",
              sse("message_stop", {"type": "message_stop"})]

    def reply(method, path, body):
        if b'"stream": true' in body:
            return 200, SSE_HEADERS, events
        return 200, {"Content-Type": "text/html"}, [html]

    async def client(url):
        return (await post(url + "/v1/messages", {"model": "m", "messages": []}),
                await post(url + "/v1/messages", {"model": "m", "stream": True,
                                                  "messages": []}))

    (page, stream), _closed = record(agent, reply, client)
    assert page == html and stream == b"".join(events)
    fails = _failures(domain(agent))
    assert any("response body is not JSON" in f for f in fails), fails
    assert any("stream event content_block_delta is not JSON" in f for f in fails), fails
    assert gasp(agent, "check").returncode == 0


def test_an_upstream_error_passes_with_its_status_and_fails_the_model_call(agent):
    err = json.dumps({"error": {"message": "rate limited", "type": "rate_limit"}}).encode()

    async def client(url):
        async with aiohttp.ClientSession() as s:
            async with s.post(url + "/v1/chat/completions", json={"model": "m"}) as resp:
                return resp.status, await resp.read()

    (status, body), _closed = record(agent, lambda m, p, b: (429, JSON_HEADERS, [err]), client)
    assert (status, body) == (429, err)
    (fin,) = _finished(domain(agent))
    assert fin["success"] is False and fin["metadata"]["status"] == 429
    assert gasp(agent, "check").returncode == 0


@pytest.mark.slow  # over half a second: out of the fast loop
def test_a_client_leaving_mid_stream_leaves_an_aborted_model_call(agent):
    chunks = anthropic_stream() * 20

    async def client(url):
        async with aiohttp.ClientSession() as s:
            async with s.post(url + "/v1/messages", json={"model": "m", "stream": True,
                                                          "messages": []}) as resp:
                await resp.content.readany()
                resp.close()  # leave while the upstream still streams
        await asyncio.sleep(1.0)

    def slow(method, path, body):
        return 200, SSE_HEADERS, chunks

    recorder = Recorder(str(agent), str(agent))

    async def go():
        up = Upstream(slow, gap=0.05)
        proxy, url = await started(up, recorder=recorder)
        try:
            await client(url)
        finally:
            await proxy.stop()
            await up.stop()

    asyncio.run(go())
    recorder.close()
    evs = domain(agent)
    (fin,) = _finished(evs)
    assert fin["success"] is False
    assert fin["metadata"]["outcome"] == "aborted"
    assert "client disconnected mid-stream" in json.dumps(fin)
    assert evs[-1].kind == "run.finished"
    assert gasp(agent, "check").returncode == 0


def test_stored_bodies_are_bounded_forwarded_ones_never(agent, monkeypatch):
    monkeypatch.setattr(exchange, "BODY_MAX", 4000)
    big_output = "x" * 3000 + "TAIL"
    body = {"model": "m", "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
                                              "function": {"name": "sh", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": big_output}]}
    huge = {**body, "pad": "y" * 10_000}
    got = []

    def reply(method, path, b):
        got.append(b)
        return 200, JSON_HEADERS, chat_whole()

    async def client(url):
        await post(url + "/v1/chat/completions", body, {"x-gasp-session": "b"})
        await post(url + "/v1/chat/completions", huge, {"x-gasp-session": "b"})

    record(agent, reply, client)
    assert got[1] == json.dumps(huge).encode()  # forwarded whole
    evs = domain(agent)
    (tf,) = [e.payload for e in evs if e.kind == "tool.finished"]
    assert len(tf["output_summary"]) < 1000 and "TAIL" not in tf["output_summary"]
    assert tf["metadata"]["cut"]["output_summary"]["bytes"] >= 3000
    assert any("past the 4000 read for recording" in f for f in _failures(evs))
    assert gasp(agent, "check").returncode == 0


def _chat_calls(rec: Recorder, session: str, texts: tuple[str, ...], *,
                flush: bool = False) -> None:
    """One chat call per text of `texts` through a proxy recording with `rec`, in
    session `session` (`flush`: each recorded before the next is sent)."""
    async def go():
        up = Upstream(lambda m, p, b: (200, JSON_HEADERS, chat_whole()))
        proxy, url = await started(up, recorder=rec)
        try:
            for text in texts:
                await post(url + "/v1/chat/completions", {"model": "m", "messages": [
                    {"role": "user", "content": text}]}, {"x-gasp-session": session})
                if flush:
                    rec.flush()
        finally:
            await proxy.stop()
            await up.stop()

    asyncio.run(go())


def test_a_run_a_killed_proxy_left_open_is_closed_by_the_next_one(agent, monkeypatch):
    first = Recorder(str(agent), str(agent))
    _chat_calls(first, "killed", ("hi",))
    first.flush()
    first.tracker.last_seen.clear()  # as if killed: it ends no session on its way out
    assert first.close() == []
    monkeypatch.setenv("GASP_SESSION_STALE_S", "0")
    second = Recorder(str(agent), str(agent))
    _chat_calls(second, "next", ("hi",))
    closed = second.close()
    assert any("run_proxy.killed finished (abandoned), committed" in c for c in closed), closed
    assert any("run_proxy.next finished (completed), committed" in c for c in closed), closed
    assert gasp(agent, "check").returncode == 0


@pytest.mark.slow  # over half a second: out of the fast loop
def test_calls_wait_while_another_writer_holds_the_lease_and_are_recorded_in_order(
        agent, monkeypatch):
    from git_gasp.proxy import recorder as recorder_mod
    from git_gasp.runtime import AgentState

    monkeypatch.setattr(recorder_mod, "LEASE_WAIT_S", 0.2)
    other = AgentState.open(agent, "someone-else")
    other.store.lease.ensure()
    rec = Recorder(str(agent), str(agent))
    _chat_calls(rec, "w", ("first", "second"))
    rec.flush()
    assert [e for e in domain(agent) if e.kind == "model.called"] == []  # still waiting
    other.close()  # the lease given back
    closed = rec.close()
    assert any("run_proxy.w finished" in c for c in closed), closed
    said = [e.payload["input_summary"] for e in domain(agent) if e.kind == "model.called"]
    assert said == ["first", "second"]
    assert gasp(agent, "check").returncode == 0


def test_a_call_that_fails_to_record_is_logged_and_the_next_is_recorded(agent, monkeypatch):
    real = recorder.model_call
    calls = []

    def once_broken(sess, ex, model):
        calls.append(ex)
        if len(calls) == 1:
            raise RuntimeError("disk on fire")
        return real(sess, ex, model)

    monkeypatch.setattr(recorder, "model_call", once_broken)
    rec = Recorder(str(agent), str(agent))
    _chat_calls(rec, "x", ("first", "second"), flush=True)
    rec.close()
    said = [e.payload["input_summary"] for e in domain(agent) if e.kind == "model.called"]
    assert said == ["second"]
    adapter_log = (agent / ".git" / "gasp" / "adapter.log").read_text()
    assert "a model call not recorded: RuntimeError: disk on fire" in adapter_log
    assert gasp(agent, "check").returncode == 0


def test_a_failure_while_stopping_is_said_and_the_stop_ends(agent, monkeypatch):
    def broken(self, st, sid):
        raise RuntimeError("no commit today")

    monkeypatch.setattr(Recorder, "_end", broken)
    rec = Recorder(str(agent), str(agent))
    _chat_calls(rec, "x", ("first", "second"), flush=True)
    closed = rec.close()  # returns: the thread ended
    assert closed == ["not all recorded: RuntimeError: no commit today "
                      "(see .git/gasp/adapter.log)"]
    assert not rec.thread.is_alive()
