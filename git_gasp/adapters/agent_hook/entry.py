"""The agent hook, ``git-gasp-hook AGENT [DIR]``: queue one hook payload and exit.

Claude Code and Codex run it on every hook event (``adapt … install`` writes it;
``git gasp adapt hook --agent AGENT [--repo DIR]``, what older versions installed, runs
`run` too) with the event's JSON on stdin. It records nothing itself:

1. it finds the git dir of DIR, else of the payload's top-level ``cwd``, else of its own
   directory (`base.gitdir.find_git_dir`, as git walks up; outside a git repository
   there is nothing to record and it exits);
2. it writes the payload's bytes, unchanged, as one entry of ``<gitdir>/gasp/queue/``
   (``hook/queue_files.py``: tmp + rename, 0600), so a hook killed at any point queued the
   whole payload or nothing; the drainer records it (its events fsynced in the log) or
   fsyncs it when it leaves it queued (`queue_files.keep`), as the hook did when it
   drained itself; a hook that can start no drainer fsyncs it before it exits;
3. a drainer records the queue (``live.drain_pending``, run as ``python -m
   git_gasp.adapters.agent_hook.drain DIR``): on ``SessionStart``, ``Stop`` and ``SessionEnd`` (the
   events that close runs: a session's own, or those of sessions that ended unseen)
   the hook runs one and waits for it, with the hook's stderr, so a boundary commit
   that failed is said where the agent shows hook output (at ``SessionStart`` with its
   stdout too: where there is no state yet, the drainer says once per session what to
   run, ``held.py``), and the session's start is
   recorded before it goes on (the agent may kill a
   slow hook: the entry is queued already and the next drain records it); on every
   other event, when no process holds the queue's lock, it starts one detached (its own
   session, stdin, stdout and stderr on /dev/null, never waited for: the agent waits
   for the hook's pipes to close) and exits at once. Two drainers started at once are
   harmless: the lock decides which one drains.

It never fails the agent: whatever goes wrong is logged to ``<gitdir>/gasp/adapter.log``
and it exits 0 (a wrong command line exits 1, which the agent shows and ignores).

Its imports are the point of this module (it runs twice per tool call): the standard
library's ``os``, ``sys``, ``time``, ``fcntl`` and what ``base.fileops`` uses
(``tests/adapters/test_agent_hook_entry.py`` holds the list); no json, which imports ``re``
and compiles its patterns: importing it on top of this module costs 30.5 M instructions
(callgrind, ``python -S``), more than starting Python (27.8 M) and twice all the rest
of its imports (15.2 M), so `top_string` reads the two top-level strings the hook
needs from the bytes, and json is loaded only for a payload it cannot read plainly.
"""

from __future__ import annotations

import os
import sys
import time

from git_gasp.adapters.agent_hook.agent_proc import agent_pid
from git_gasp.adapters.agent_hook.queue_files import AGENTS, enqueue, keep, lock_held, log
from git_gasp.base.gitdir import find_git_dir

USAGE = ("usage: git-gasp-hook AGENT [DIR]: reads one hook payload (JSON) on stdin, queues "
         "it in the git dir of DIR (else of the payload's cwd) and exits; AGENT is one of "
         f"{', '.join(AGENTS)}. The agent runs it: `git gasp adapt claude-code install`")
BOUNDARY_EVENTS = ("SessionStart", "Stop", "SessionEnd",  # drained while the hook waits
                   "AfterAgent")  # Gemini CLI's Stop
DRAINER = "git_gasp.adapters.agent_hook.drain"


def top_string(data: bytes, key: str) -> str | None:
    """The string value of `key` in the JSON object `data` as both agents write it (the
    key ``"key":`` outside any string, before any nested object with that key: ``cwd``
    and ``hook_event_name`` come before ``tool_input``); None when it is not there so
    plainly (absent, not a string, escaped characters in it, not UTF-8)."""
    needle = b'"' + key.encode() + b'":'
    at = data.find(needle)
    while at > 0 and data[at - 1:at] == b"\\":  # an escaped quote: inside a string
        at = data.find(needle, at + 1)
    if at < 0:
        return None
    start = at + len(needle)
    while data[start:start + 1] in (b" ", b"\t", b"\r", b"\n"):
        start += 1
    if data[start:start + 1] != b'"':
        return None
    end = data.find(b'"', start + 1)
    value = data[start + 1:end] if end > 0 else b"\\"
    if b"\\" in value:
        return None
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return None


def payload_cwd(data: bytes) -> str | None:
    """The payload's ``cwd`` when it names a directory, else None."""
    cwd = top_string(data, "cwd")
    if cwd is None and b'"cwd"' in data:  # escaped or spaced: the JSON parser decides
        import json  # only here: importing json costs the common case what it saves

        try:
            payload = json.loads(data)
        except ValueError:
            return None
        cwd = payload.get("cwd") if isinstance(payload, dict) else None
    return cwd if isinstance(cwd, str) and os.path.isdir(cwd) else None


def start_drainer(start: str, *, report_since_ms: int | None = None,
                  tell: str | None = None) -> None:
    """Run ``python -m git_gasp.adapters.agent_hook.drain`` for `start`: with `report_since_ms`,
    waited for, with this process's stderr (it reports the boundary commits that failed
    since) and, with `tell` (the session's id, at its start), its stdout (where payloads
    are held for want of a state, it says what to run), else detached (a session of its
    own, every standard stream on /dev/null) and left running."""
    wait = report_since_ms is not None
    argv = [sys.executable, "-P", "-m", DRAINER,
            *(["--report", str(report_since_ms)] if wait else []),
            *(["--tell", tell] if wait and tell is not None else []), "--", start]
    streams = ((0,) if tell is not None else (0, 1)) if wait else (0, 1, 2)
    actions = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in streams]
    pid = os.posix_spawn(sys.executable, argv, os.environ, file_actions=actions,
                         setsid=not wait)
    if wait:
        os.waitpid(pid, 0)


def run(data: bytes, agent: str | None = None, repo: str | None = None) -> None:
    """Queue the payload `data` (for `agent`, in the git dir of `repo`, else of the
    payload's cwd, else of this directory) and see that a drainer records it. Never
    raises."""
    gdir = None
    began_ms = time.time_ns() // 1_000_000
    try:
        start = repo or payload_cwd(data) or os.getcwd()
        gitdir = find_git_dir(start)
        if gitdir is None:
            return  # not in a git repository: no agent state to record into
        gdir = os.path.join(gitdir, "gasp")
        if not data.strip():
            log(gdir, "empty hook payload; nothing to record")
            return
        event = top_string(data, "hook_event_name")
        if event == "AfterModel" and b'"finishReason"' not in data:
            return  # Gemini CLI's streamed chunk before the last: the call ends on that
        found = agent_pid()  # the drainer runs after this hook (and its parent) are gone
        entry = enqueue(gdir, agent if agent in AGENTS else None, data,
                        pid=found[0] if found else None)
        if not sys.executable:
            keep(entry)
            log(gdir, "no Python to start a drainer with; the next command records the queue")
        elif event in BOUNDARY_EVENTS:
            tell = (top_string(data, "session_id") or "-") if event == "SessionStart" else None
            start_drainer(start, report_since_ms=began_ms, tell=tell)
        elif not lock_held(gdir):
            start_drainer(start)
    except Exception as exc:  # noqa: BLE001 - a hook never breaks the agent
        log(gdir, f"hook error: {type(exc).__name__}: {exc}")


def read_stdin() -> bytes | None:
    """The payload on stdin; None when there is none to read (a terminal, closed)."""
    if sys.stdin is None or sys.stdin.isatty():
        return None
    try:
        return sys.stdin.buffer.read()
    except (OSError, ValueError):
        return None


def main(argv: list[str] | None = None) -> int:
    """``git-gasp-hook AGENT [DIR]`` (the console script); 0 unless misused. Once the
    payload is queued the process ends at once (`os._exit`): it holds nothing to flush
    or close but the standard streams, and the interpreter's tear-down would add a
    quarter to the hook's time."""
    args = sys.argv[1:] if argv is None else argv
    if not 1 <= len(args) <= 2 or args[0] not in AGENTS:
        sys.stderr.write(f"git gasp: error: {USAGE}\n")
        return 1
    data = read_stdin()
    if data is None:
        sys.stderr.write(USAGE + "\n")
        return 0
    run(data, args[0], args[1] if len(args) == 2 else None)
    if argv is None:  # the program, not a caller in a process that goes on
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
