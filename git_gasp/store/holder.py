"""Is the process that holds a lease still running? Only this host can tell.

A lease records its holder's host name, pid, pid namespace and process start time
(``/proc/<pid>/stat`` field 22, clock ticks since boot). A holder is judged dead only
when all of it is known and says so: same host and pid namespace, and either no such
process (``kill(pid, 0)`` raises ProcessLookupError), a zombie, or a process with
another start time (the pid was reused). A lease from another host, another pid
namespace, or an older lease without these fields is never judged dead.
"""

from __future__ import annotations

import os

from git_gasp.base.record import Record as Value

ALIVE, DEAD, UNKNOWN = "alive", "dead", "unknown"


class Verdict(Value):

    FIELDS = ("state", "why")

    def __init__(self, state: str, why: str) -> None:
        self.state = state  # alive | dead | unknown
        self.why = why  # a few words for a message: "no longer running", "on another host", ...


def this_host() -> str:
    return os.uname().nodename


def pid_namespace() -> str | None:
    """This process's pid namespace (``pid:[4026531836]``), None where /proc has none."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return None


def proc_stat(pid: int) -> bytes | None:
    """``/proc/<pid>/stat`` (None where it cannot be read: no such process, no /proc)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read()
    except OSError:
        return None


def _stat(pid: int) -> tuple[str, int] | None:
    """(state letter, start time in clock ticks) of `pid` from /proc, None if unreadable."""
    data = proc_stat(pid)
    if data is None:
        return None
    fields = data[data.rfind(b")") + 2:].split()  # after "pid (comm) ": field 3 onwards
    try:
        return fields[0].decode(), int(fields[19])
    except (IndexError, ValueError, UnicodeDecodeError):
        return None


def start_time(pid: int) -> int | None:
    """The start time of process `pid` (clock ticks since boot), None where unknown."""
    stat = _stat(pid)
    return stat[1] if stat is not None else None


def verdict(host: str | None, pid: int, started: int | None, pidns: str | None) -> Verdict:
    """Whether the holder (`host`, `pid`, `started`, `pidns` as its lease recorded them)
    is running."""
    if pid == 0:  # `Lease.keep_between_commands`: a worker's, not a process's
        return Verdict(UNKNOWN, "kept by its worker between commands")
    if host is None:
        return Verdict(UNKNOWN, "an older lease without its host: cannot tell if it runs")
    if host != this_host():
        return Verdict(UNKNOWN, "on another host: cannot tell from here if it runs")
    if pidns is not None and pidns != pid_namespace():
        return Verdict(UNKNOWN, "in another pid namespace (container): cannot tell if it runs")
    if pid <= 0:
        return Verdict(UNKNOWN, "no usable pid")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return Verdict(DEAD, "no longer running")
    except PermissionError:
        pass  # it exists, owned by someone else
    except OSError:
        return Verdict(UNKNOWN, "cannot tell if it runs")
    stat = _stat(pid)
    if stat is not None:
        state, now_started = stat
        if state in ("Z", "X"):
            return Verdict(DEAD, "no longer running")  # a zombie
        if started is not None and now_started != started:
            return Verdict(DEAD, "no longer running, its pid now belongs to another process")
    return Verdict(ALIVE, "running")
