"""Scripted local model servers for Claude Code and Codex (stdlib http.server in a thread).

Each server plays the model with a fixed script — write ``calc.py`` with a bug, write
a test, run it and fail, fix the bug, run it and pass, commit — choosing the next step
by counting the tool results in the request (so a retried request gets the same
answer). The wire formats are the ones ``samples/README.md`` measured:

- Claude Code: ``POST /v1/messages?beta=true`` (``stream: true``) answered with
  server-sent events ``message_start``, ``content_block_start``/``_delta``/``_stop``
  (``text_delta`` or ``input_json_delta``), ``message_delta`` (``stop_reason``),
  ``message_stop``.
- Codex: ``POST /v1/responses`` answered with ``response.created``,
  ``response.output_item.added``, ``response.output_text.delta``,
  ``response.output_item.done`` (a ``function_call`` named ``exec_command`` or an
  assistant ``message``) and ``response.completed``.
- Gemini CLI (``GOOGLE_GEMINI_BASE_URL``): ``POST /v1beta/models/<model>:streamGenerateContent
  ?alt=sse`` answered with one ``data: {candidates, usageMetadata, modelVersion}`` event
  (a ``functionCall`` part or text, ``finishReason: STOP``); the step is the count of
  ``functionResponse`` parts in ``contents``. Its side requests (a JSON-schema
  answer asked for: the next-speaker check, the router) get ``{}``-shaped JSON.
- Qwen Code (``OPENAI_BASE_URL``) and Aider (through the proxy): ``POST
  /v1/chat/completions`` (``stream: true``) answered with ``chat.completion.chunk``
  events (a ``tool_calls`` delta or content, then ``finish_reason`` and ``usage``) and
  ``data: [DONE]``, by one ``ChatHandler`` whose chooser picks the answer: Qwen's step
  is the count of ``role: tool`` messages (a request without tools, a title or a
  summary, gets text: ``tool_steps``); Aider's, a whole-file edit or a commit message
  (``aider_whole_file``).
"""

from __future__ import annotations

import json
import shlex
import threading
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MARKER = "planted marker line the capture rules keep out"  # of no event under digest
BUGGY = f"def add(a, b):\n    # {MARKER}\n    return a - b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
PROMPT = "Fix the add function so the test passes, then commit"
FINAL = "Fixed add() and committed; the test passes."
COMMIT = ("git add calc.py test_calc.py && git -c user.name=dev -c user.email=dev@example.com "
          "commit -qm 'Fix add' && git log --oneline -1")


NOISY = "seq 1 52000"  # a tool that prints ~300 KB


def claude_script(python: str, *, noisy: bool = False) -> list[tuple[str, dict] | str]:
    """(tool name, input) steps, then the final text (`noisy`: a ~300 KB print first)."""
    test = f"{shlex.quote(python)} -m pytest -q -p no:cacheprovider test_calc.py"
    loud = [("Bash", {"command": NOISY, "description": "Count"})] if noisy else []
    return [*loud,
        ("Write", {"file_path": "{cwd}/calc.py", "content": BUGGY}),
        ("Write", {"file_path": "{cwd}/test_calc.py", "content": TEST}),
        ("Bash", {"command": test, "description": "Run the tests"}),
        ("Edit", {"file_path": "{cwd}/calc.py", "old_string": "return a - b",
                  "new_string": "return a + b", "replace_all": False}),
        ("Bash", {"command": test, "description": "Run the tests again"}),
        ("Bash", {"command": COMMIT, "description": "Commit the fix"}),
        FINAL,
    ]


def codex_script(python: str, *, noisy: bool = False) -> list[str]:
    """Shell commands for exec_command, then the final text (`noisy`: a ~300 KB print
    first)."""
    test = f"{shlex.quote(python)} -m pytest -q -p no:cacheprovider test_calc.py"
    return [*([NOISY] if noisy else []),
        "printf 'def add(a, b):\\n    return a - b\\n' > calc.py",
        "printf 'from calc import add\\n\\n\\ndef test_add():\\n    assert add(2, 3) == 5\\n'"
        " > test_calc.py",
        test,
        "sed -i 's/a - b/a + b/' calc.py",
        test,
        COMMIT,
        FINAL,
    ]


def gemini_script(python: str) -> list[tuple[str, dict] | str]:
    """(Gemini CLI tool name, args) steps, then the final text."""
    test = f"{shlex.quote(python)} -m pytest -q -p no:cacheprovider test_calc.py"
    return [
        ("write_file", {"file_path": "{cwd}/calc.py", "content": BUGGY}),
        ("write_file", {"file_path": "{cwd}/test_calc.py", "content": TEST}),
        ("run_shell_command", {"command": test, "description": "Run the tests"}),
        ("replace", {"file_path": "{cwd}/calc.py", "old_string": "return a - b",
                     "new_string": "return a + b", "instruction": "Fix add",
                     "allow_multiple": False}),
        ("run_shell_command", {"command": test, "description": "Run the tests again"}),
        ("run_shell_command", {"command": COMMIT, "description": "Commit the fix"}),
        FINAL,
    ]


def _sse(event: str, data: dict) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


class _Base(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        pass

    def _body(self) -> dict:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return {}

    def _json(self, code: int, obj: Any) -> None:
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, chunks: list[bytes]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for chunk in chunks:
            self.wfile.write(chunk)
        self.wfile.flush()
        self.close_connection = True

    def do_GET(self) -> None:  # noqa: N802 - http.server API
        self.server.requests.append(("GET", self.path, None))
        if self.path.startswith("/v1/models"):
            self._json(200, {"data": [], "object": "list", "models": []})
        else:
            self._json(404, {"error": {"type": "not_found", "message": self.path}})


class ClaudeHandler(_Base):
    def do_POST(self) -> None:  # noqa: N802
        body = self._body()
        self.server.requests.append(("POST", self.path, body))
        if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
            self._json(200, {"input_tokens": 10})
            return
        results = sum(
            1 for m in body.get("messages", []) if isinstance(m.get("content"), list)
            for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result")
        if not body.get("tools"):  # a side request (titles, summaries): answer, don't advance
            step: Any = "ok"
        else:
            script = self.server.script
            step = script[min(results, len(script) - 1)]
        mid = f"msg_{uuid.uuid4().hex[:20]}"
        model = body.get("model", "claude-test")
        usage = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}
        if not body.get("stream"):
            content = [{"type": "text", "text": step if isinstance(step, str) else "ok"}]
            self._json(200, {"id": mid, "type": "message", "role": "assistant", "model": model,
                             "content": content, "stop_reason": "end_turn",
                             "stop_sequence": None, "usage": usage})
            return
        start = {"id": mid, "type": "message", "role": "assistant", "model": model,
                 "content": [], "stop_reason": None, "stop_sequence": None,
                 "usage": dict(usage, output_tokens=1)}
        chunks = [_sse("message_start", {"type": "message_start", "message": start})]
        if isinstance(step, str):
            text, tool = step, None
        else:
            text, tool = f"Step {results + 1}: using {step[0]}.", step
        chunks += [
            _sse("content_block_start", {"type": "content_block_start", "index": 0,
                                         "content_block": {"type": "text", "text": ""}}),
            _sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                         "delta": {"type": "text_delta", "text": text}}),
            _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ]
        if tool is not None:
            name, inp = tool
            inp = json.loads(json.dumps(inp).replace("{cwd}", self.server.cwd))
            chunks += [
                _sse("content_block_start", {
                    "type": "content_block_start", "index": 1,
                    "content_block": {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:20]}",
                                      "name": name, "input": {}}}),
                _sse("content_block_delta", {
                    "type": "content_block_delta", "index": 1,
                    "delta": {"type": "input_json_delta", "partial_json": json.dumps(inp)}}),
                _sse("content_block_stop", {"type": "content_block_stop", "index": 1}),
            ]
        chunks += [
            _sse("message_delta", {"type": "message_delta",
                                   "delta": {"stop_reason": "tool_use" if tool else "end_turn",
                                             "stop_sequence": None},
                                   "usage": {"output_tokens": 5}}),
            _sse("message_stop", {"type": "message_stop"}),
        ]
        self._stream(chunks)


class CodexHandler(_Base):
    def do_POST(self) -> None:  # noqa: N802
        body = self._body()
        self.server.requests.append(("POST", self.path, body))
        if not self.path.rstrip("/").endswith("/responses"):
            self._json(404, {"error": {"message": f"unexpected {self.path}"}})
            return
        outputs = sum(1 for item in body.get("input", []) if isinstance(item, dict)
                      and item.get("type") == "function_call_output")
        script = self.server.script
        step = script[min(outputs, len(script) - 1)]
        rid = f"resp_{uuid.uuid4().hex[:12]}"
        chunks = [_sse("response.created", {"type": "response.created",
                                            "response": {"id": rid, "status": "in_progress"}})]
        last = step is script[-1]
        if last:
            item = {"type": "message", "role": "assistant", "id": f"msg_{uuid.uuid4().hex[:12]}",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": step, "annotations": []}]}
            added = dict(item, content=[], status="in_progress")
            chunks += [
                _sse("response.output_item.added", {"type": "response.output_item.added",
                                                    "output_index": 0, "item": added}),
                _sse("response.output_text.delta", {
                    "type": "response.output_text.delta", "item_id": item["id"],
                    "output_index": 0, "content_index": 0, "delta": step}),
            ]
        else:
            item = {"type": "function_call", "id": f"fc_{uuid.uuid4().hex[:12]}",
                    "call_id": f"call_{uuid.uuid4().hex[:12]}", "name": "exec_command",
                    "arguments": json.dumps({"cmd": step}), "status": "completed"}
            chunks.append(_sse("response.output_item.added", {
                "type": "response.output_item.added", "output_index": 0,
                "item": dict(item, arguments="", status="in_progress")}))
        chunks += [
            _sse("response.output_item.done", {"type": "response.output_item.done",
                                               "output_index": 0, "item": item}),
            _sse("response.completed", {"type": "response.completed", "response": {
                "id": rid, "status": "completed", "output": [item],
                "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                          "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                          "total_tokens": 15}}}),
        ]
        self._stream(chunks)


GEMINI_MODEL = "gemini-2.5-pro"


class GeminiHandler(_Base):
    def do_POST(self) -> None:  # noqa: N802
        body = self._body()
        self.server.requests.append(("POST", self.path, body))
        if ":countTokens" in self.path:
            self._json(200, {"totalTokens": 10})
            return
        if ":embedContent" in self.path or ":batchEmbedContents" in self.path:
            self._json(200, {"embeddings": []})
            return
        usage = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
        config = body.get("generationConfig") or {}
        if config.get("responseMimeType") == "application/json" or not body.get("tools"):
            # a side request (next speaker, routing, a summary): answer, don't advance
            text = json.dumps({"next_speaker": "user", "reasoning": "done",
                               "model_choice": "pro"}) if config.get(
                "responseMimeType") == "application/json" else "ok"
            part: dict = {"text": text}
        else:
            done = sum(1 for c in body.get("contents", []) if isinstance(c, dict)
                       for p in c.get("parts") or [] if isinstance(p, dict)
                       and "functionResponse" in p)
            script = self.server.script
            step = script[min(done, len(script) - 1)]
            if isinstance(step, str):
                part = {"text": step}
            else:
                args = json.loads(json.dumps(step[1]).replace("{cwd}", self.server.cwd))
                part = {"functionCall": {"name": step[0], "args": args}}
        chunk = {"candidates": [{"content": {"role": "model", "parts": [part]},
                                 "finishReason": "STOP", "index": 0}],
                 "usageMetadata": usage, "modelVersion": GEMINI_MODEL,
                 "responseId": uuid.uuid4().hex[:16]}
        if "streamGenerateContent" in self.path:
            self._stream([f"data: {json.dumps(chunk)}\r\n\r\n".encode()])
        else:
            self._json(200, chunk)


def qwen_script(python: str) -> list[tuple[str, dict] | str]:
    """(Qwen Code tool name, args) steps, then the final text."""
    test = f"{shlex.quote(python)} -m pytest -q -p no:cacheprovider test_calc.py"
    return [
        ("write_file", {"file_path": "{cwd}/calc.py", "content": BUGGY}),
        ("write_file", {"file_path": "{cwd}/test_calc.py", "content": TEST}),
        ("run_shell_command", {"command": test, "is_background": False}),
        ("edit", {"file_path": "{cwd}/calc.py", "old_string": "return a - b",
                  "new_string": "return a + b"}),
        ("run_shell_command", {"command": test, "is_background": False}),
        ("run_shell_command", {"command": COMMIT, "is_background": False}),
        FINAL,
    ]


QWEN_MODEL = "qwen3-coder-plus"


FIXED = "def add(a, b):\n    return a + b\n"
AIDER_PROMPT = "Fix the add function in calc.py: it subtracts instead of adding"
AIDER_COMMIT = "fix: add returns the sum of its arguments"

def tool_steps(body: dict, script: list) -> str | tuple[str, dict]:
    """Qwen Code's script: the step after as many as the request has ``role: tool``
    answers; a request without tools (a title, a summary) gets text, and no step."""
    if not body.get("tools"):
        return "ok"
    done = sum(1 for m in body.get("messages", []) if isinstance(m, dict)
               and m.get("role") == "tool")
    return script[min(done, len(script) - 1)]


def aider_whole_file(body: dict, script: list) -> str:
    """Aider's script (``--edit-format whole``): asked for a commit message (its commit
    prompt), `AIDER_COMMIT`; asked anything else, ``calc.py`` rewritten whole, fixed."""
    if "commit message" in json.dumps(body.get("messages", [])):
        return AIDER_COMMIT
    return "Here is the fix.\n\ncalc.py\n```python\n" + FIXED + "```\n"


class ChatHandler(_Base):
    """An OpenAI-compatible Chat Completions model (Qwen Code's, Aider's), its answer
    chosen by the server's `chooser` (`tool_steps`, `aider_whole_file`) from the request
    and the script: text, or one tool call. Streamed when asked (``chat.completion.chunk``
    events, the text in pieces, then ``finish_reason``, then ``data: [DONE]``), else one
    ``chat.completion``. A stream carries its token usage in a chunk of its own when
    ``stream_options.include_usage`` asks for it (as OpenAI's API does), else in its
    last chunk (as llama.cpp's and other OpenAI-compatible servers do; Aider's streams do
    not ask)."""

    def do_POST(self) -> None:  # noqa: N802
        body = self._body()
        self.server.requests.append(("POST", self.path, body))
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._json(404, {"error": {"message": f"unexpected {self.path}"}})
            return
        step = self.server.chooser(body, self.server.script)
        asked = len(json.dumps(body.get("messages", [])))
        usage = {"prompt_tokens": 100 + asked // 10, "completion_tokens": 20,
                 "total_tokens": 120 + asked // 10}
        base = {"id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "created": 1,
                "model": body.get("model") or QWEN_MODEL}
        if isinstance(step, str):
            message: dict = {"role": "assistant", "content": step}
            deltas = [{"role": "assistant", "content": ""}] + [
                {"content": step[i:i + 24]} for i in range(0, len(step), 24)]
            reason = "stop"
        else:
            args = json.dumps(step[1]).replace("{cwd}", self.server.cwd)
            call = {"id": f"call_{uuid.uuid4().hex[:12]}", "type": "function",
                    "function": {"name": step[0], "arguments": args}}
            message = {"role": "assistant", "content": None, "tool_calls": [call]}
            deltas = [{"role": "assistant", "tool_calls": [dict(call, index=0)]}]
            reason = "tool_calls"
        if not body.get("stream"):
            self._json(200, dict(base, object="chat.completion", usage=usage, choices=[
                {"index": 0, "message": message, "finish_reason": reason}]))
            return
        base["object"] = "chat.completion.chunk"
        chunks = [dict(base, choices=[{"index": 0, "delta": d, "finish_reason": None}])
                  for d in deltas]
        last = dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": reason}])
        if (body.get("stream_options") or {}).get("include_usage"):
            chunks += [last, dict(base, choices=[], usage=usage)]
        else:
            chunks.append(dict(last, usage=usage))
        self._stream([f"data: {json.dumps(c)}\n\n".encode() for c in chunks]
                     + [b"data: [DONE]\n\n"])


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    script: list
    chooser: Callable[[dict, list], Any]
    cwd: str
    requests: list


class ModelServer:
    """A scripted model on 127.0.0.1:<port>, served from a daemon thread."""

    def __init__(self, handler: type[_Base], script: list, cwd: str = "",
                 chooser: Callable[[dict, list], Any] = tool_steps) -> None:
        """`chooser`: how `ChatHandler` picks its answer from a request and `script`."""
        self.httpd = _Server(("127.0.0.1", 0), handler)
        self.httpd.script = script
        self.httpd.chooser = chooser
        self.httpd.cwd = cwd
        self.httpd.requests = []
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    @property
    def requests(self) -> list:
        return self.httpd.requests

    def __enter__(self) -> ModelServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
