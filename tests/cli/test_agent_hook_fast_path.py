"""`git gasp adapt hook [--agent A] [--repo P]` runs before click is imported
(`cli.main.agent_hook_main`): the fast path and the click command record the same
events and give the same output and exit code, and it takes exactly the click
command's options."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from git_gasp.cli.commands.adapt import hook
from git_gasp.cli.commands.agent_hook import OPTIONS, fast_args
from tests.adapters.samples import CLAUDE_HOOKS, read_jsonl

ROOT = Path(__file__).resolve().parent.parent.parent
FAST = [sys.executable, "-P", "-m", "git_gasp.cli.main"]
CLICK = [sys.executable, "-P", "-c",
         "import sys; from git_gasp.cli.main import click_main; click_main(sys.argv[1:])"]


def both(cwd: Path, args: list[str], data: bytes | None) -> subprocess.CompletedProcess:
    fast = subprocess.run([*FAST, *args], cwd=cwd, input=data, capture_output=True)
    slow = subprocess.run([*CLICK, *args], cwd=cwd, input=data, capture_output=True)
    assert (fast.returncode, fast.stdout, fast.stderr) == \
        (slow.returncode, slow.stdout, slow.stderr)
    return fast


def test_fast_options_are_the_click_commands_options():
    opts = {opt: p.name for p in hook.params for opt in p.opts}
    assert opts == OPTIONS


@pytest.mark.parametrize("argv, expected", [
    (["adapt", "hook"], {}),
    (["adapt", "hook", "--agent", "codex"], {"agent": "codex"}),
    (["adapt", "hook", "--agent=claude-code", "--repo", "r"], {"agent": "claude-code",
                                                               "repo": "r"}),
])
def test_fast_args_reads_plain_invocations(argv, expected):
    assert fast_args(argv) == expected


@pytest.mark.parametrize("argv", [
    ["adapt", "hook", "-h"], ["adapt", "hook", "--help"], ["adapt", "hook", "--ag", "x"],
    ["adapt", "hook", "--agent"], ["adapt", "hook", "--agent="], ["adapt", "hook", "x"],
    ["adapt", "hook", "--agent", "a", "--agent", "b"], ["adapt", "hook", "--repo", "--agent"],
    ["adapt", "hook", "--", "x"], ["adapt"], ["adapt", "claude-code", "install"],
])
def test_anything_else_goes_to_click(argv):
    assert fast_args(argv) is None


def _payload(agent: Path, event: str, tool_use_id: str = "toolu_fast") -> bytes:
    sample = next(p for p in read_jsonl(CLAUDE_HOOKS) if p["hook_event_name"] == event)
    sample = dict(sample, cwd=str(agent), session_id="fast-path")
    if "tool_use_id" in sample:
        sample["tool_use_id"] = tool_use_id
    return json.dumps(sample).encode()


def test_both_record_a_payload_alike(agent, tmp_path):
    args = ["adapt", "hook", "--agent", "claude-code"]
    log = agent / ".git" / "gasp" / "adapter.log"
    events = agent / "state" / "events.jsonl"
    for event in ("SessionStart", "PreToolUse"):
        fast = subprocess.run([*FAST, *args], cwd=agent, input=_payload(agent, event),
                              capture_output=True)
        assert (fast.returncode, fast.stdout, fast.stderr) == (0, b"", b"")
    before = events.read_bytes()
    fast = subprocess.run([*FAST, *args], cwd=agent, input=_payload(agent, "PostToolUse"),
                          capture_output=True)
    assert (fast.returncode, fast.stdout, fast.stderr) == (0, b"", b"")
    added = events.read_bytes()[len(before):]
    assert b'"tool.finished"' in added, added[:500]
    assert log.read_text().splitlines()[-1].endswith("PostToolUse: recorded in "
                                                     "run_claude-code.fast-path")
    # the same payload through click: recognised as a replay, nothing added
    slow = subprocess.run([*CLICK, *args], cwd=agent, input=_payload(agent, "PostToolUse"),
                          capture_output=True)
    assert (slow.returncode, slow.stdout, slow.stderr) == (0, b"", b"")
    assert events.read_bytes()[len(before):] == added


@pytest.mark.parametrize("args, data", [
    (["adapt", "hook", "--agent", "claude-code"], b"not json"),
    (["adapt", "hook", "--agent", "bogus"], b"{}"),
    (["adapt", "hook"], b""),
    (["adapt", "hook", "--repo"], b"{}"),  # click's one-line usage error, exit 2
    (["adapt", "hook", "--agent", "codex", "--repo", "nowhere"], b"{}"),
])
def test_fast_path_and_click_agree(agent, args, data):
    both(agent, args, data)


def test_without_a_payload_on_stdin_both_say_how_it_is_run(tmp_path):
    outs = []
    for argv in (FAST, CLICK):
        pid, fd = pty.fork()
        if pid == 0:  # the child: stdin, stdout and stderr are the terminal
            os.chdir(tmp_path)
            os.execv(argv[0], [*argv, "adapt", "hook"])
        out = b""
        while True:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        _, status = os.waitpid(pid, 0)
        outs.append((os.waitstatus_to_exitcode(status), out))
    assert outs[0] == outs[1]
    assert outs[0][0] == 0 and b"reads one hook payload (JSON) on stdin" in outs[0][1]


