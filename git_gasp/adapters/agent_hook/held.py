"""Payloads queued where there is no agent state yet: held, redacted and bounded.

A clone whose committed agent settings carry the hooks, but which never ran ``git gasp
init --branch`` (or whose ``gasp.state`` is gone, or whose ``AGENT.md`` is another
tool's), queues every hook payload as usual. The drainer finds no state to record them
into; it never drops them silently: `hold` moves each entry to ``queue/held/``
(``queue_files.held_dir``) cut and redacted by the one redactor, as recording would
(no state may ever come, and an entry must not wait there holding a secret), mode 0600,
under the name it had, so held entries keep their order. At most HELD_MAX_ENTRIES
entries and HELD_MAX_BYTES bytes are held: the oldest are kept, the rest dropped with a
line in ``adapter.log``. An entry that is not JSON cannot be redacted: it is set aside
in ``queue/failed/`` as any drain does (``agent_hook_queue.set_aside``), which ``doctor``
reports.

Once a state is found, `release` moves the held entries back into the queue, ahead of
what was queued since, and the drain records them (``live.drain_pending``; ``init
--branch`` drains at its end). `notice` is the one line the agent shows the person at
the start of each session meanwhile (``hook/drain.py --tell``).
"""

from __future__ import annotations

import os
import re

from git_gasp.adapters.agent_hook.queue_files import held, held_dir, log, queue_dir, queued
from git_gasp.adapters.agent_hook_queue import ENTRY_MAX, entry_bytes, redacted, set_aside
from git_gasp.base.errors import GaspError
from git_gasp.base.fileops import move_into_place, remove_file
from git_gasp.base.files import atomic_write, read_file

HELD_MAX_ENTRIES = 5000  # a long session is ~2,000 payloads
HELD_MAX_BYTES = 64 << 20
TOLD = "told"  # <gitdir>/gasp/told/<session id>: the person was told in that session
SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def notice(qgdir: str) -> str:
    """The line the person is shown while payloads are held."""
    where = os.path.relpath(held_dir(qgdir), os.path.dirname(os.path.dirname(qgdir)))
    return ("git gasp: this repository has no agent state yet, so this session is kept "
            f"(redacted) in {where}; run `git gasp init --branch` to record it")


def hold(qgdir: str, start: str | os.PathLike) -> int:
    """Move what is queued in ``<qgdir>/queue`` into ``queue/held``, redacted, within
    the caps (the oldest kept); return how many were held. The caller holds the queue's
    lock."""
    top = os.path.dirname(qgdir)
    sizes = [_size(p) for p in held(qgdir)]
    count, total, kept, dropped = len(sizes), sum(sizes), 0, 0
    for entry in queued(qgdir):
        name = os.path.basename(entry)
        try:
            agent, clean = redacted(name, read_file(entry, limit=ENTRY_MAX, root=top))
        except FileNotFoundError:
            continue
        except (GaspError, OSError) as exc:  # not JSON, not a regular file: nothing to redact
            set_aside(qgdir, entry, None, None, f"not understood: {exc}")
            log(qgdir, f"{name}: not understood: {exc}; moved to queue/failed/")
            continue
        data = entry_bytes(name, agent, clean)
        if count + 1 > HELD_MAX_ENTRIES or total + len(data) > HELD_MAX_BYTES:
            os.unlink(entry)
            dropped += 1
            continue
        atomic_write(os.path.join(held_dir(qgdir), name), data, root=top, mode=0o600,
                     make_parents=True)
        os.unlink(entry)
        count, total, kept = count + 1, total + len(data), kept + 1
    if kept or dropped:
        log(qgdir, f"no agent state for {os.fspath(start)}: {kept} hook payload(s) held "
                   f"(redacted) in queue/held until `git gasp init --branch`, {count} in all"
                   + (f"; {dropped} dropped: the held queue is full ({HELD_MAX_ENTRIES} "
                      f"entries, {HELD_MAX_BYTES >> 20} MiB)" if dropped else ""))
    return kept


def release(qgdir: str) -> int:
    """Move the held entries back into the queue (a state exists now), to be recorded
    first; return how many. The caller holds the queue's lock."""
    entries = held(qgdir)
    for entry in entries:
        move_into_place(entry, os.path.join(queue_dir(qgdir), os.path.basename(entry)),
                        root=os.path.dirname(qgdir))
    told = os.path.join(qgdir, TOLD)
    for name in os.listdir(told) if os.path.isdir(told) else ():
        remove_file(os.path.join(told, name))  # a state now: nobody is to be told
    if entries:
        log(qgdir, f"{len(entries)} held hook payload(s) queued again to be recorded")
    return len(entries)


def first_time(qgdir: str, session_id: str) -> bool:
    """Whether the person has not yet been told of the held queue in the session
    `session_id`, noting that they are now (a SessionStart repeats on resume, /clear
    and compaction: they are told once)."""
    if not SESSION_ID.fullmatch(session_id):
        return True
    told = os.path.join(qgdir, TOLD)
    marker = os.path.join(told, session_id)
    if os.path.exists(marker):
        return False
    atomic_write(marker, b"", root=os.path.dirname(qgdir), make_parents=True, durable=False)
    return True


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0
