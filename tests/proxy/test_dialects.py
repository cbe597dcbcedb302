"""Each API's request and response read into the neutral form, odd shapes included: what
cannot be read is a problem noted, never an exception."""

from __future__ import annotations

import json

import pytest

from git_gasp.proxy.dialect import (
    ANTHROPIC,
    CHAT,
    GEMINI,
    RESPONSES,
    api_of,
    is_model_call,
    parse_json_text,
)
from git_gasp.proxy.exchange import Exchange
from tests.proxy.upstream import chat_stream, gemini_stream


def _exchange(api: str, path: str, body, chunks: list[bytes], content_type: str) -> Exchange:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    ex = Exchange(api, "POST", path, None, raw)
    ex.respond(200, content_type, "")
    for c in chunks:
        ex.feed(c)
    ex.finish("completed")
    return ex


@pytest.mark.parametrize(("path", "headers", "api"), [
    ("/v1/messages", {}, ANTHROPIC),
    ("/v1/messages/count_tokens", {}, ANTHROPIC),
    ("/v1/models", {"anthropic-version": "2023-06-01"}, ANTHROPIC),
    ("/v1/chat/completions", {}, CHAT),
    ("/chat/completions", {}, CHAT),
    ("/v1/models", {}, CHAT),
    ("/v1/responses", {}, RESPONSES),
    ("/v1beta/models/gemini-2.5-pro:generateContent", {}, GEMINI),
    ("/v1beta/models", {}, GEMINI),
])
def test_the_api_of_a_request(path, headers, api):
    assert api_of(path, headers) == api


def test_only_model_calls_are_recorded():
    assert is_model_call(ANTHROPIC, "POST", "/v1/messages?beta=true")
    assert not is_model_call(ANTHROPIC, "POST", "/v1/messages/count_tokens")
    assert not is_model_call(CHAT, "GET", "/v1/models")
    assert is_model_call(GEMINI, "POST", "/v1beta/models/g:streamGenerateContent")


def test_chat_tool_call_streamed_in_pieces_is_one_call_with_parsed_arguments():
    ex = _exchange(CHAT, "/v1/chat/completions", {"model": "gpt-test", "stream": True},
                   chat_stream(tool=("call_7", "shell", {"cmd": ["ls", "-la"]})),
                   "text/event-stream")
    r = ex.reply
    assert [(c.id, c.name, c.input) for c in r.calls] == [
        ("call_7", "shell", {"cmd": ["ls", "-la"]})]
    assert r.stop_reason == "tool_calls" and r.usage["completion_tokens"] == 9
    assert ex.problems == []


def test_gemini_calls_without_ids_are_named_by_their_place_in_the_conversation():
    contents = [{"role": "user", "parts": [{"text": "go"}]}]
    ex = _exchange(GEMINI, "/v1beta/models/gemini-x:streamGenerateContent?alt=sse",
                   {"contents": contents}, gemini_stream(call=("run", {"cmd": "ls"})),
                   "text/event-stream")
    (call,) = ex.reply.calls
    assert (call.id, call.name, call.input) == ("fc1.0", "run", {"cmd": "ls"})
    assert ex.asked.model == "gemini-x" and ex.reply.model == "gemini-test"
    later = Exchange(GEMINI, "POST", "/v1beta/models/gemini-x:generateContent", None,
                     json.dumps({"contents": [*contents, {"role": "model", "parts": [
                         {"functionCall": {"name": "run", "args": {"cmd": "ls"}}}]},
                         {"role": "user", "parts": [{"functionResponse": {
                             "name": "run", "response": {"output": "a.txt"}}}]}]}).encode())
    assert [c.id for c in later.asked.calls] == ["fc1.0"]
    assert [(r.id, r.output) for r in later.asked.results] == [("fc1.0", '{"output": "a.txt"}')]
    assert later.asked.prompt is None  # the last turn carries results, not the user's text


def test_gemini_stream_without_sse_is_one_json_array():
    chunks = [json.loads(c.decode()[len("data: "):]) for c in gemini_stream()]
    ex = _exchange(GEMINI, "/v1beta/models/g:streamGenerateContent", {"contents": []},
                   [json.dumps(chunks).encode()], "application/json")
    assert "".join(ex.reply.text) == "Looking. Done." and ex.reply.stop_reason == "STOP"
    assert ex.reply.usage["totalTokenCount"] == 17


@pytest.mark.parametrize("body", [
    {"messages": "not a list"}, {"messages": [1, None, "x", {"role": "user", "content": 5}]},
    {"model": 7, "stream": "yes"}, {"messages": [{"role": "assistant", "content": [
        {"type": "tool_use"}]}]},
])
def test_odd_request_shapes_are_read_without_raising(body):
    for api, path in ((ANTHROPIC, "/v1/messages"), (CHAT, "/v1/chat/completions"),
                      (RESPONSES, "/v1/responses"), (GEMINI, "/v1beta/models/g:generateContent")):
        ex = Exchange(api, "POST", path, None, json.dumps(body).encode())
        assert ex.asked.stream is False and ex.problems == [], ex.problems
        assert ex.asked.model is None or isinstance(ex.asked.model, str)


def test_a_responses_request_of_plain_text_is_its_prompt():
    ex = Exchange(RESPONSES, "POST", "/v1/responses", None, b'{"model":"m","input":"do it"}')
    assert (ex.asked.model, ex.asked.prompt) == ("m", "do it")


def test_only_the_results_of_the_models_last_turn_are_new():
    """Older results were new in an earlier request: a session resumed in a new run
    (or a proxy started mid-conversation) does not record the history again."""
    def turn(n):
        return [{"role": "assistant", "content": [
                    {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"n": n}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": f"t{n}", "content": f"out {n}"}]}]

    body = {"messages": [{"role": "user", "content": "go"}, *turn(1), *turn(2)]}
    ex = Exchange(ANTHROPIC, "POST", "/v1/messages", None, json.dumps(body).encode())
    assert [(c.id, c.input) for c in ex.asked.calls] == [("t2", {"n": 2})]
    assert [(r.id, r.output) for r in ex.asked.results] == [("t2", "out 2")]
    items = [{"role": "user", "content": "go"},
             {"type": "function_call", "call_id": "a", "name": "x", "arguments": "{}"},
             {"type": "function_call_output", "call_id": "a", "output": "1"},
             {"type": "reasoning", "summary": []},
             {"type": "function_call", "call_id": "b", "name": "x", "arguments": "{}"},
             {"type": "function_call", "call_id": "c", "name": "y", "arguments": "{}"},
             {"type": "function_call_output", "call_id": "b", "output": "2"},
             {"type": "function_call_output", "call_id": "c", "output": "3"}]
    ex = Exchange(RESPONSES, "POST", "/v1/responses", None, json.dumps({"input": items}).encode())
    assert [c.id for c in ex.asked.calls] == ["b", "c"]
    assert [r.id for r in ex.asked.results] == ["b", "c"]


def test_a_deeply_nested_or_huge_number_body_is_a_problem_not_an_exception():
    """A body only a recursion-bounded or digit-bounded parser refuses (deep nesting, a
    5,000-digit number) is recorded as not JSON, as any other unreadable body is."""
    deep = b"[" * 200_000 + b"]" * 200_000
    huge = b'{"model": "m", "max_tokens": ' + b"9" * 5000 + b"}"
    for body in (deep, huge):
        ex = Exchange(CHAT, "POST", "/v1/chat/completions", None, body)
        assert any("not JSON" in p for p in ex.problems), ex.problems
    assert parse_json_text("[" * 200_000) == "[" * 200_000
