"""The drainer: ``python -m git_gasp.adapters.agent_hook.drain [--report SINCE_MS] [--tell SESSION]
[--] DIR`` records what the agent hooks queued in the git dir of DIR
(``live.drain_pending``), then exits.

The agent hook (``hook/entry.py``) starts it detached on most events and waits for it,
with ``--report`` (the hook's start, in ms since the epoch), at ``SessionStart``,
``Stop`` and ``SessionEnd``: it then waits for a drainer at work to finish first, and
says on stderr, where the agent shows hook output, each boundary commit that failed
since, whichever drainer made it. At ``SessionStart`` the hook adds ``--tell`` with the
session's id and its own stdout: where the repository has no agent state and the
payloads are held (``held.py``), the drainer prints, once per session, the
``{"systemMessage": …}`` that Claude Code and Codex show the person, saying what to
run. It always exits 0; what goes wrong is in ``<gitdir>/gasp/adapter.log``.
"""

from __future__ import annotations

import json
import os
import sys

from git_gasp.adapters.agent_hook.held import first_time, notice
from git_gasp.adapters.agent_hook.queue_files import held, log
from git_gasp.adapters.live import LOCK_WAIT_S, drain_pending, find_agent_root, gasp_dir
from git_gasp.adapters.session_sweep import BoundaryCommit, failed_commits
from git_gasp.base.gitdir import find_git_dir

USAGE = ("usage: python -m git_gasp.adapters.agent_hook.drain [--report SINCE_MS] [--tell SESSION] "
         "[--] DIR\n")


def report(failures: list[BoundaryCommit]) -> str:
    """What the person is told of boundary commits that failed (one line each)."""
    return "".join(f"git gasp: {c} (the events are recorded; `git gasp doctor` says how "
                   "to commit them)\n" for c in failures)


def parse(args: list[str]) -> tuple[int | None, str | None, str] | None:
    """(SINCE_MS or None, SESSION or None, DIR) from the command line; None when it is
    not one."""
    since = tell = None
    if args[:1] == ["--report"] and len(args) >= 2 and args[1].isdigit():
        since, args = int(args[1]), args[2:]
    if args[:1] == ["--tell"] and len(args) >= 2:
        tell, args = args[1], args[2:]
    if args[:1] == ["--"]:
        args = args[1:]
    return (since, tell, args[0]) if len(args) == 1 else None


def tell_held(start: str, session: str, out: int) -> None:
    """Write to the descriptor `out` the agent's ``systemMessage`` saying what to run when
    payloads are held in the git dir of `start` for want of a state (once per
    `session`)."""
    gitdir = find_git_dir(start)
    if gitdir is None or find_agent_root(start) is not None:
        return
    qgdir = os.path.join(gitdir, "gasp")
    if held(qgdir) and first_time(qgdir, session):
        os.write(out, (json.dumps({"systemMessage": notice(qgdir)}) + "\n").encode())


def main(argv: list[str] | None = None) -> int:
    """Drain the queue of the directory `argv` names; always 0."""
    parsed = parse(sys.argv[1:] if argv is None else argv)
    if parsed is None:
        sys.stderr.write(USAGE)
        return 0
    since, tell, start = parsed
    out = None
    if tell is not None:  # the agent reads this stdout: only the message goes there
        out = os.dup(1)
        quiet = os.open(os.devnull, os.O_WRONLY)
        os.dup2(quiet, 1)
        os.close(quiet)
    result = drain_pending(start, lock_wait_s=LOCK_WAIT_S if since is not None else 0.0)
    if tell is not None and out is not None:
        try:
            tell_held(start, tell, out)
        except Exception as exc:  # noqa: BLE001 - the drainer never fails the agent
            log(os.path.join(find_git_dir(start) or start, "gasp"),
                f"telling of the held queue failed: {type(exc).__name__}: {exc}")
    if since is None:
        return 0
    failures = {c.run_id: c for c in result.not_committed}
    root = find_agent_root(start)
    for found in failed_commits(gasp_dir(root), since) if root is not None else ():
        failures.setdefault(found.run_id, found)  # failed in a drainer that was at work
    if failures:
        sys.stderr.write(report(list(failures.values())))
        sys.stderr.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
