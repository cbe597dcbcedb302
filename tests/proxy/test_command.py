"""`git gasp proxy` as a user runs it: on loopback, relaying, ending its sessions on SIGINT;
bad options and the wrong place are one-line errors."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.testing.run import gasp, git, git_gasp_exe, out

ANSWER = json.dumps({"id": "c", "model": "gpt-test", "choices": [
    {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1}}).encode()


class _Upstream(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 - http.server API
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(ANSWER)))
        self.end_headers()
        self.wfile.write(ANSWER)

    def log_message(self, *args):
        pass


@pytest.mark.slow  # over half a second: out of the fast loop
def test_proxy_listens_on_loopback_relays_and_commits_on_sigint(agent):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    # git-gasp itself, not `git gasp`: the signal goes to the proxy (a terminal's Ctrl-C
    # reaches both, git waiting for its child)
    proc = subprocess.Popen(
        [*git_gasp_exe(), "proxy", "--port", "0", "--upstream",
         f"openai=http://127.0.0.1:{server.server_port}"],
        cwd=agent, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = proc.stderr.readline().decode()
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
        assert m, line + proc.stderr.read1().decode()
        req = urllib.request.Request(
            f"http://127.0.0.1:{m.group(1)}/v1/chat/completions",
            data=json.dumps({"model": "gpt-test", "messages": [
                {"role": "user", "content": "hi"}]}).encode(),
            headers={"Content-Type": "application/json", "x-gasp-session": "cli-1",
                     "Authorization": "Bearer sk-proj-notarealkeynotarealkey"})
        with urllib.request.urlopen(req, timeout=20) as resp:
            assert resp.read() == ANSWER
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        server.shutdown()
    assert proc.returncode == 0, stderr.decode()
    assert "run_proxy.cli-1 finished (completed), committed" in stdout.decode()
    assert git(agent, "log", "-1", "--format=%s").startswith("run run_proxy.cli-1")
    assert b"notarealkey" not in (agent / "state" / "events.jsonl").read_bytes()


def test_a_bad_upstream_is_a_usage_error(agent):
    proc = gasp(agent, "proxy", "--upstream", "mistral=http://x")
    assert proc.returncode == 2
    assert out(proc).strip().splitlines()[-1].startswith("git gasp: error: --upstream")


def test_outside_an_agent_repository_it_refuses(tmp_path):
    git(tmp_path, "init", "-q")
    proc = gasp(tmp_path, "proxy", "--port", "0")
    err = proc.stderr.decode()
    assert proc.returncode == 2 and proc.stdout == b""
    assert err.startswith("git gasp: error: not an agent repository") and err.count("\n") == 1


def test_listen_any_says_it_listens_on_every_interface(agent):
    proc = subprocess.Popen([*git_gasp_exe(), "proxy", "--port", "0", "--listen-any"],
                            cwd=agent, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = proc.stderr.readline().decode()
        port = int(re.search(r"127\.0\.0\.1:(\d+) \(and on every other interface\)",
                             line).group(1))
        with socket.create_connection((socket.gethostname(), port), timeout=10):
            pass  # reachable at the address the host name resolves to
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0


def test_a_port_in_use_is_one_line(agent):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        proc = gasp(agent, "proxy", "--port", str(taken.getsockname()[1]))
    err = proc.stderr.decode()
    assert proc.returncode == 1, err
    assert err.startswith("git gasp: error: cannot listen on 127.0.0.1:") and err.count("\n") == 1
