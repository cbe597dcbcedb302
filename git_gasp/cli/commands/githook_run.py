"""What `git gasp hook NAME` does, without click: the CLI's fast path (`cli.main`
dispatches a hook before click is even imported) and the click command share it. The
server's pre-receive runs on every push (a sync's lost race too), the local hooks on
every commit."""

from __future__ import annotations

import os
import sys

from git_gasp.cli.handler import leave
from git_gasp.guard.warm import Warm

TYPE_CHECKING = False  # typing costs 6 ms of every guarded commit (bench_guard)
if TYPE_CHECKING:
    from typing import NoReturn


def run_hook(name: str) -> NoReturn:
    """Guard the commit git is making in the current directory (the hook's cwd): print
    the refusal report on stderr and exit 1, or exit 0 to let the commit through."""
    cwd = os.getcwd()
    if _a_project_beside_its_state(cwd):
        leave(0)  # the state is on its own branch: the project's commits are not the agent's
    warm = Warm.start(cwd)  # git and the log read run while the rules load:
    # the rules are imported after it started (measured: 13 ms of a guarded commit)
    from git_gasp.guard.commit_guard import run_guard
    from git_gasp.guard.rejection import report

    rejections = run_guard(cwd, warm=warm)
    if rejections:
        sys.stderr.write(report(rejections, hook=name) + "\n")
    # Leave without tearing down what the guard built (nothing needs it any more).
    sys.stdout.flush()
    sys.stderr.flush()
    leave(1 if rejections else 0)


def _a_project_beside_its_state(cwd: str) -> bool:
    """True when the commit is made in a work tree of a project whose state is on a
    branch of its own (`init --branch`: ``gasp.stateBranch``): the guard hooks are shared
    by every worktree of the repository, and only the state's own commits are the
    agent's. A state in a folder of the project (`init PATH`) is guarded as ever."""
    from git_gasp.store.location import configured

    conf = configured(cwd)
    return conf is not None and conf.branch is not None and \
        os.path.realpath(conf.path) != os.path.realpath(cwd)


def pre_receive(check: bool) -> int:
    """The server's pre-receive in the current directory (a bare repository): OLD NEW
    REF lines on stdin; each refusal and the fix hint on stderr; 1 when it refused."""
    # the server's checks load here only: 18 ms off every guarded commit (pre-commit)
    from pathlib import Path

    from git_gasp.guard.receive import fix_hint, run_pre_receive

    data = sys.stdin.buffer.read()
    refusals = run_pre_receive(Path.cwd(), data, check=check)
    for refusal in refusals:
        sys.stderr.write(refusal.line() + "\n")
    hint = fix_hint(data, refusals) if refusals else None
    if hint:
        sys.stderr.write(hint + "\n")
    sys.stderr.flush()
    return 1 if refusals else 0
