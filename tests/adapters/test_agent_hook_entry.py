"""The agent hook, `git-gasp-hook AGENT [DIR]`: it imports only what queueing needs,
queues the payload and returns at once, its drainer detached from the agent's pipes."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import time
from pathlib import Path

import pytest

from git_gasp.adapters.agent_hook.entry import top_string
from git_gasp.adapters.agent_hook.queue_files import lock_held, queued
from git_gasp.store.lease import Lease
from tests.adapters.samples import CLAUDE_HOOKS, read_jsonl
from tests.testing.imports import imported
from tests.testing.run import drained, git_gasp_exe

ROOT = Path(__file__).resolve().parent.parent.parent
HOOK = str(Path(git_gasp_exe()[0]).with_name("git-gasp-hook"))
# Everything the hook may import beyond what `python -c pass` loads: the standard
# library's pieces of os, files and locks, and the git-gasp modules that queue.
HOOK_IMPORTS = frozenset({
    "__future__", "os", "stat", "_stat", "posixpath", "genericpath", "_collections_abc",
    "errno", "fcntl",
    "git_gasp", "git_gasp.adapters", "git_gasp.adapters.agent_hook",
    "git_gasp.adapters.agent_hook.entry", "git_gasp.adapters.agent_hook.queue_files",
    "git_gasp.adapters.agent_hook.agent_proc", "git_gasp.base",
    "git_gasp.base.gitdir", "git_gasp.base.fileops", "git_gasp.base.errors",
    "git_gasp.base.agentnames",
    "git_gasp.base.record", "git_gasp.store", "git_gasp.store.holder",
})


def _payload(repo: Path, event: str) -> bytes:
    sample = next(p for p in read_jsonl(CLAUDE_HOOKS) if p["hook_event_name"] == event)
    return json.dumps(dict(sample, cwd=str(repo), session_id="entry"),
                      separators=(",", ":")).encode()


def _imports(argv_code: str, cwd: Path, data: bytes) -> set[str]:
    """What a run of `argv_code` imports (-S: no site, so an editable install's finder
    hides nothing; the package from this checkout)."""
    proc = subprocess.run([sys.executable, "-S", "-X", "importtime", "-P", "-c",
                           f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
                           + argv_code], cwd=cwd, input=data, capture_output=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return set(imported(proc.stderr))


def test_the_hook_imports_only_what_queueing_needs(agent):
    bare = _imports("pass", agent, b"")
    run = ("sys.argv[1:] = ['claude-code']\n"
           "from git_gasp.adapters.agent_hook.entry import main; main()")
    for event in ("SessionStart", "PostToolUse"):
        mods = _imports(run, agent, _payload(agent, event))
        assert "git_gasp.adapters.agent_hook.entry" in mods
        assert not mods - bare - HOOK_IMPORTS, (event, sorted(mods - bare - HOOK_IMPORTS))
    drained(agent)
    assert not queued(str(agent / ".git" / "gasp"))
    log = (agent / ".git" / "gasp" / "adapter.log").read_text()
    assert log.splitlines()[-1].endswith("PostToolUse: recorded in run_claude-code.entry")


@pytest.mark.parametrize("data, key, value", [
    (b'{"cwd":"/a/b","hook_event_name":"Stop"}', "cwd", "/a/b"),
    (b'{"cwd": "/a/b", "hook_event_name": "Stop"}', "hook_event_name", "Stop"),
    (b'{"x":"\\"cwd\\":\\"/evil\\"","cwd":"/a"}', "cwd", "/a"),  # inside a string first
    (b'{"cwd":"/a\\"b"}', "cwd", None),  # escaped: left to the JSON parser
    (b'{"cwd":7}', "cwd", None),
    (b'{"cwd":"/a', "cwd", None),
    (b'{"cwd":"\xff"}', "cwd", None),
    (b'{}', "cwd", None),
])
def test_top_string_reads_a_plain_top_level_string(data, key, value):
    assert top_string(data, key) == value


def test_the_hook_returns_while_its_drainer_waits(agent):
    """A drainer kept waiting (another writer holds the lease) does not keep the hook of a
    tool call (SessionStart, Stop and SessionEnd wait for theirs): it returns at once,
    its pipes closed, the entry queued; the drainer records it once the lease is free."""
    lease = Lease(agent, "someone-else@host")
    lease.ensure()
    env = dict(os.environ, GASP_HOOK_BUDGET="30")
    gdir = str(agent / ".git" / "gasp")
    try:
        began = time.monotonic()
        proc = subprocess.run([HOOK, "claude-code"], cwd=agent, env=env, timeout=60,
                              input=_payload(agent, "PreToolUse"), capture_output=True)
        took = time.monotonic() - began
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
        assert took < 5, took  # the drainer waits up to 8 s for the lease
        [entry] = queued(gdir)
        deadline = time.monotonic() + 10
        while not lock_held(gdir) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert lock_held(gdir)  # the detached drainer is at work
    finally:
        lease.release()
    drained(agent)
    assert not queued(gdir)
    assert b"tool.called" in (agent / "state" / "events.jsonl").read_bytes()


@pytest.mark.parametrize("argv", [[], ["aider"], ["claude-code", "a", "b"], ["--agent", "codex"]])
def test_a_wrong_command_line_is_one_line_and_exit_1(tmp_path, argv):
    proc = subprocess.run([HOOK, *argv], cwd=tmp_path, input=b"{}", capture_output=True)
    assert proc.returncode == 1 and proc.stdout == b""
    assert proc.stderr.startswith(b"git gasp: error: usage: git-gasp-hook AGENT [DIR]")
    assert proc.stderr.count(b"\n") == 1


def test_without_a_payload_on_stdin_it_says_how_it_is_run(tmp_path):
    pid, fd = pty.fork()
    if pid == 0:  # the child: stdin, stdout and stderr are the terminal
        os.chdir(tmp_path)
        os.execv(HOOK, [HOOK, "codex"])
    said = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        said += chunk
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert b"reads one hook payload (JSON) on stdin" in said


def test_outside_a_git_repository_nothing_is_written(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    proc = subprocess.run([HOOK, "claude-code", str(plain)], cwd=plain,
                          input=b'{"session_id":"s","hook_event_name":"SessionStart"}',
                          capture_output=True)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    assert list(plain.iterdir()) == []
