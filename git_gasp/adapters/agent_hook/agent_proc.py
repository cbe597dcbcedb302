"""The agent process a hook runs under: its nearest ancestor that is not git, git-gasp or
a shell, read from ``/proc`` (Linux; None elsewhere). The agent hook (``hook/entry.py``)
names it in each queue entry, since the drainer that records the entry runs after the
hook is gone; ``session_close.py`` remembers it per session and tells whether it runs."""

from __future__ import annotations

import os

from git_gasp.store.holder import proc_stat

WRAPPERS = frozenset({"git", "git-gasp", "git-gasp-hook", "sh", "bash", "dash", "zsh", "ksh",
                      "mksh", "fish", "busybox", "env", "timeout", "nice", "nohup", "setsid",
                      "stdbuf"})
MAX_DEPTH = 12


def proc_info(pid: int) -> tuple[str, int, int] | None:
    """(command name, parent pid, start time in clock ticks) of `pid` from /proc."""
    data = proc_stat(pid)
    if data is None:
        return None
    raw = data.decode("utf-8", "replace")
    head, _, rest = raw.rpartition(")")
    fields = rest.split()
    if "(" not in head or len(fields) < 20:
        return None
    try:
        return head.split("(", 1)[1], int(fields[1]), int(fields[19])
    except ValueError:
        return None


def agent_pid(start_pid: int | None = None) -> tuple[int, str, int] | None:
    """(pid, command name, start time) of the agent process: `start_pid` (default this
    process's parent) or its nearest ancestor that is not a wrapper; None where /proc
    cannot say."""
    pid = start_pid if start_pid is not None else os.getppid()
    for _ in range(MAX_DEPTH):
        if pid <= 1:
            return None
        info = proc_info(pid)
        if info is None:
            return None
        name, parent, started = info
        if name not in WRAPPERS and not name.startswith("git-"):
            return pid, name, started
        pid = parent
    return None
