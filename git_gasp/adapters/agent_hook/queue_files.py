"""The hook queue's files in ``<gitdir>/gasp/``: its entries, its lock, its log.

An entry is one file in ``queue/`` holding the bytes an agent sent to its hook,
unchanged whatever their encoding, named ``<time_ns:020d>-<pid:08d>-<hex>.<agent>.payload``
(the agent process, or the process that queued it when that is not known; the agent the
hook was installed for, or ``detect``): written to a temporary name and
renamed (so it is always whole), mode 0600 (it may hold secrets until it is drained),
under the git dir (never committed). Entries are drained in name order, which is the
order the hooks queued them. ``hook.lock`` (flock) is held by whoever drains;
``adapter.log`` says what happened. The agent hook (``hook/entry.py``) imports this
module, so it imports nothing beyond `base.fileops`; the drain is ``agent_hook_queue.py``.
"""

from __future__ import annotations

import os
import time

from git_gasp.base.agentnames import AGENTS
from git_gasp.base.fileops import (
    AtomicFile,
    fsync_dir,
    move_into_place,
    open_output,
    open_regular,
    try_lock,
)

ENTRY_SUFFIXES = (".payload", ".json")  # this git-gasp's entries, an older one's
WHY_SUFFIX = ".why"  # beside an entry set aside in queue/failed/: one line, why
LOCK_NAME = "hook.lock"
LOG_NAME = "adapter.log"
LOG_MAX_BYTES = 1 << 20


def queue_dir(gdir: str) -> str:
    """Where queued hook payloads wait: ``<gitdir>/gasp/queue``."""
    return os.path.join(gdir, "queue")


def enqueue(gdir: str, agent: str | None, data: bytes, pid: int | None = None) -> str:
    """Write the payload bytes `data`, unchanged, as one queue entry (whole or not at
    all, readable only by its owner), naming the agent process `pid` (default this
    process: the drainer then looks for the agent above it). Not fsynced yet: see
    `keep`."""
    tag = agent if agent in AGENTS else "detect"
    who = pid if pid is not None else os.getpid()
    name = f"{time.time_ns():020d}-{who:08d}-{os.urandom(4).hex()}.{tag}.payload"
    with AtomicFile(os.path.join(queue_dir(gdir), name), root=os.path.dirname(gdir),
                    make_parents=True, mode=0o600, durable=False) as fh:
        fh.write(data)
    return fh.path


def keep(*entries: str) -> None:
    """Make the queue entries `entries` durable (fsync each, then the queue) when they
    stay queued as the process that was to record them exits: the drainer that could
    not record them (the lease held, its time spent, a failure) or a process that
    queued one and started no drainer. An entry recorded is gone by then, its events
    fsynced in the log, so the common case spends no fsync on it (a killed process
    loses nothing either way: only a power cut drops what the page cache holds). Never
    raises."""
    kept = None
    for entry in entries:
        try:
            fd = open_regular(entry)
        except OSError:  # recorded and removed, or set aside: nothing left to keep
            continue
        try:
            os.fsync(fd)
            kept = entry
        except OSError:
            pass
        finally:
            os.close(fd)
    if kept is not None:
        fsync_dir(os.path.dirname(kept))


def held_dir(gdir: str) -> str:
    """Where payloads queued in a repository with no agent state yet wait, redacted, for
    ``git gasp init --branch``: ``<gitdir>/gasp/queue/held`` (``adapters/agent_hook/held.py``)."""
    return os.path.join(queue_dir(gdir), "held")


def held(gdir: str) -> list[str]:
    """The held entries (paths), oldest first."""
    return _entries(held_dir(gdir))


def failed_dir(gdir: str) -> str:
    """Where an entry that could not be recorded is set aside, with its ``.why`` line:
    ``<gitdir>/gasp/queue/failed`` (``agent_hook_queue.set_aside``)."""
    return os.path.join(queue_dir(gdir), "failed")


def set_aside_entries(gdir: str) -> list[str]:
    """The entries set aside (paths), oldest first."""
    return _entries(failed_dir(gdir))


def entry_time_ns(entry: str) -> int | None:
    """When the entry `entry` (a path or name) was queued, from its name; None when its
    name does not say."""
    stamp = os.path.basename(entry).split("-", 1)[0]
    return int(stamp) if stamp.isdigit() else None


def entry_agent(entry: str) -> str | None:
    """The agent a ``.payload`` entry's name says it was queued for; None for ``detect``,
    an unknown name, or an older git-gasp's ``.json`` entry (whose record says it)."""
    name = os.path.basename(entry)
    if not name.endswith(".payload") or name.count(".") < 2:
        return None
    tag = name.rsplit(".", 2)[-2]
    return tag if tag in AGENTS else None


def queued(gdir: str) -> list[str]:
    """The queue's entries (paths), oldest first."""
    return _entries(queue_dir(gdir))


def _entries(directory: str) -> list[str]:
    try:
        names = os.listdir(directory)
    except OSError:  # no queue yet
        return []
    return sorted(os.path.join(directory, name) for name in names
                  if name.endswith(ENTRY_SUFFIXES) and not name.startswith("."))


def lock_held(gdir: str) -> bool:
    """Whether a process holds the queue's lock (a drainer is at work) right now."""
    try:
        with try_lock(os.path.join(gdir, LOCK_NAME), 0) as got:
            return not got
    except OSError:
        return False  # no lock file can be made: a drainer finds out why and logs it


def log(gdir: str | os.PathLike | None, message: str) -> None:
    """Append one line to ``adapter.log`` (rotated at LOG_MAX_BYTES); never raises."""
    if gdir is None:
        return
    try:
        path = os.path.join(gdir, LOG_NAME)
        if os.path.exists(path) and os.stat(path).st_size > LOG_MAX_BYTES:
            move_into_place(path, path + ".1",
                            root=os.path.dirname(os.fspath(gdir)))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        line = f"{stamp} pid={os.getpid()} {message}".replace("\n", "\n    ") + "\n"
        with open_output(path, append=True) as fh:
            fh.write(line.encode("utf-8"))
    except Exception:  # noqa: BLE001 - the log never breaks the hook (OSError, UnsafePath)
        pass
