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
from tests.testing.imports import IMPORTED_BY, ImportTrace

ROOT = Path(__file__).resolve().parent.parent.parent
FAST = [sys.executable, "-P", "-m", "git_gasp.cli.main"]
# What recording a tool call may not load, beside what tests/test_packaging.py forbids
# (click, dulwich, yaml, traceback, gzip, the layers it does not drive): the seventh
# session of bench/README.md took each off the hook's path (callgrind: 488 -> 215 M
# instructions per PostToolUse) and this keeps them off. typing, dataclasses (inspect,
# ast, dis), tomllib (then: .agent/config.toml's parse was remembered), orjson (the end state
# spares the log's parse, and orjson imports dataclasses, uuid, platform), socket (the
# lease's host), subprocess, threading, shutil, datetime (transcripts and git only), and
# the snapshot caches (an end state needs none). The ninth session took off uuid and
# platform (base.ids formats its UUIDv7 itself: 10 M instructions), hashlib (a short
# SHA-256 from the built-in module, base.digest: 11 M), contextlib (locks and approval
# are classes: 3 M) and the checks (the vocabulary loads from conformance.packs: 6 M).
# The tenth took off pathlib (str paths through the hook's modules; in 3.11 pathlib
# imports urllib.parse and ipaddress: 17 M), importlib (and the warnings it imports) and
# fnmatch: 3 M.
# Issue 40 took the config memo away: recording reads .agent/config.toml through its one
# reader, so tomllib (and the typing, datetime, contextlib and warnings it imports) until
# the hook only enqueues.
HOOK_FORBIDDEN = ("dataclasses", "inspect", "ast", "orjson",
                  "socket", "subprocess", "threading", "shutil",
                  "uuid", "platform", "hashlib", "pathlib", "urllib",
                  "importlib", "fnmatch",
                  "git_gasp.conformance.checks", "git_gasp.runtime.seed",
                  "git_gasp.adapters.session_sweep",
                  "git_gasp.store.snapshots")
# Python code to run first: writes "re compile: MODULE" to stderr for every pattern re's
# compiler compiles, MODULE being the code that asked (re and base.lazyre skipped).
RE_WATCH = """\
import sys as _sys
try:
    from re import _compiler as _c
except ImportError:
    import sre_compile as _c
_compile = _c.compile
def _watched(p, flags=0):
    f = _sys._getframe(1)
    while f is not None and f.f_globals.get("__name__", "").startswith(
            ("re", "sre_", "git_gasp.base.lazyre")):
        f = f.f_back
    who = f.f_globals.get("__name__") if f is not None else None
    _sys.stderr.write(f"re compile: {who} {p!r}\\n")
    return _compile(p, flags)
_c.compile = _watched
"""
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


def test_recording_a_tool_call_loads_none_of_the_modules_taken_off_its_path(agent):
    """End to end, as Claude Code runs it: every hook after the session's first opens
    from the end state the one before saved, with the config's parse remembered, and
    imports nothing `HOOK_FORBIDDEN` names (the chain that loaded each one is printed).
    The first hook in a repo reads the log and parses the config itself."""
    args = ["adapt", "hook", "--agent", "claude-code"]
    runs = [("SessionStart", "toolu_a"), ("PreToolUse", "toolu_a"), ("PostToolUse", "toolu_a"),
            ("PreToolUse", "toolu_b"), ("PostToolUse", "toolu_b")]
    # -S: no site, so a development venv's editable-install finder (which imports
    # pathlib and contextlib at start-up) cannot hide what the hook itself imports; the
    # package comes from this checkout, as the finder would give it.
    traced = [sys.executable, "-S", "-X", "importtime", "-P", "-c",
              IMPORTED_BY + RE_WATCH + f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
              "sys.argv[1:] = " + repr(args) + "\n"
              "from git_gasp.cli.main import main; main()"]
    for i, (event, tool) in enumerate(runs):
        proc = subprocess.run(traced, cwd=agent, input=_payload(agent, event, tool),
                              capture_output=True)
        assert proc.returncode == 0, proc.stderr[-2000:]
        trace = ImportTrace(proc.stderr)
        assert "git_gasp.adapters.live" in trace.modules
        if i:
            assert not trace.culprits(HOOK_FORBIDDEN), trace.explain(HOOK_FORBIDDEN, event)
        compiled = [line for line in proc.stderr.decode().splitlines()
                    if line.startswith("re compile: git_gasp")]
        if i >= 3:  # the calls before compiled these patterns and kept them (base.lazyre)
            assert not compiled, (event, compiled)
        elif i == 0:
            assert compiled, "the watch saw no compile: it watches nothing"
    log = (agent / ".git" / "gasp" / "adapter.log").read_text().splitlines()
    assert log[-1].endswith("PostToolUse: recorded in run_claude-code.fast-path"), log[-3:]
    assert list((agent / ".git" / "gasp" / "end-state").glob("*.bin"))
