"""The single-writer lease `.agent/lease`: {"worker_id", "pid", "expires_at_ms"} and,
since 0.1, the holder's "host", "started" (process start time) and "pidns".

Taken by exclusive create, renewed by tmp+rename, an expired one stolen by
rename-then-recheck; a corrupt one is refused, never overwritten. A lease whose holder
is a process of this host that is no longer running (``holder.verdict``) is taken over
at once like an expired one. Sound on a local filesystem; advisory on network
filesystems (spec Part V).
"""

from __future__ import annotations

import errno
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

from git_gasp.base.errors import GaspError
from git_gasp.base.fileops import AtomicFile, NotARegularFile, read_regular_file, remove_file
from git_gasp.base.files import read_file, refuse_links
from git_gasp.base.ids import new_uuid, now_ms
from git_gasp.base.record import Record as Value
from git_gasp.store import holder

LEASE_REL = ".agent/lease"
DEFAULT_TTL_MS = 10 * 60 * 1000
MAX_LEASE_BYTES = 1 << 16  # a lease is one short JSON object
_REQUIRED = {"worker_id": str, "pid": int, "expires_at_ms": int}
_OPTIONAL = {"host": str, "started": int, "pidns": str}


class LeaseError(GaspError):
    """The lease cannot be taken or read."""


class LeaseHeld(LeaseError):
    """Another worker holds a live lease."""


class LeaseCorrupt(LeaseError):
    """The lease file does not hold a lease record."""


def when(ms: int) -> str:
    """Epoch milliseconds as a local date, the way git prints one: 2026-12-01 22:10:05 +0100."""
    return time.strftime("%Y-%m-%d %H:%M:%S %z", time.localtime(ms / 1000))


def span(ms: int) -> str:
    """A duration, short: 45s, 9m 59s, 2h 5m, 3d 4h."""
    s = max(0, ms) // 1000
    for unit, size, sub, subsize in (("d", 86400, "h", 3600), ("h", 3600, "m", 60),
                                     ("m", 60, "s", 1)):
        if s >= size:
            rest = (s % size) // subsize
            return f"{s // size}{unit}" + (f" {rest}{sub}" if rest else "")
    return f"{s}s"


class LeaseRecord(Value):

    FIELDS = ("worker_id", "pid", "expires_at_ms", "host", "started", "pidns")

    def __init__(self, worker_id: str, pid: int, expires_at_ms: int, host: str | None = None,
                 started: int | None = None, pidns: str | None = None) -> None:
        self.worker_id = worker_id
        self.pid = pid
        self.expires_at_ms = expires_at_ms
        self.host = host  # None: a lease written before hosts were recorded
        self.started = started  # the holder's start time (holder.start_time)
        self.pidns = pidns

    def to_bytes(self) -> bytes:
        obj: dict = {"worker_id": self.worker_id, "pid": self.pid,
                     "expires_at_ms": self.expires_at_ms}
        obj.update((k, getattr(self, k)) for k in _OPTIONAL if getattr(self, k) is not None)
        return (json.dumps(obj, separators=(",", ":")) + "\n").encode()

    def expired(self, at_ms: int | None = None) -> bool:
        return self.expires_at_ms <= (now_ms() if at_ms is None else at_ms)

    def holder(self) -> holder.Verdict:
        """Whether the holding process still runs (only this host can say it does not)."""
        return holder.verdict(self.host, self.pid, self.started, self.pidns)

    def dead(self) -> bool:
        """The holder is a process of this host that is no longer running."""
        return self.holder().state == holder.DEAD

    def expiry(self, at_ms: int | None = None) -> str:
        """`until 2026-12-01 22:10:05 +0000 (in 9m 59s)` or `expired … (3m ago)`."""
        left = self.expires_at_ms - (now_ms() if at_ms is None else at_ms)
        if left > 0:
            return f"until {when(self.expires_at_ms)} (in {span(left + 999)})"
        return f"expired {when(self.expires_at_ms)} ({span(-left)} ago)"

    def describe(self, at_ms: int | None = None) -> str:
        """`w1 (pid 42 on box, running, until 2026-12-01 22:10:05 +0000 (in 9m 59s))`."""
        where = f" on {self.host}" if self.host else ""
        who = f"pid {self.pid}{where}" if self.pid else where.strip() or "no pid"
        return f"{self.worker_id} ({who}, {self.holder().why}, {self.expiry(at_ms)})"


def default_worker_id() -> str:
    """$GASP_WORKER_ID, else `<user>@<host>` (stable across CLI invocations)."""
    env = os.environ.get("GASP_WORKER_ID")
    if env:
        return env
    user = os.environ.get("USER") or os.environ.get("LOGNAME") or str(os.getuid())
    return f"{user}@{os.uname().nodename}"


def parse_lease(data: bytes, rel: str = LEASE_REL) -> LeaseRecord:
    """Parse lease bytes (raises LeaseCorrupt with a remedy); host, started and pidns may
    be missing (older leases)."""
    try:
        obj = json.loads(data)
    except (ValueError, RecursionError):  # a syntax error, a huge number, deep nesting
        obj = None
    known = _REQUIRED.keys() | _OPTIONAL.keys()
    ok = (type(obj) is dict and _REQUIRED.keys() <= obj.keys() <= known
          and all(type(obj[k]) is t for k, t in (*_REQUIRED.items(), *_OPTIONAL.items())
                  if k in obj)
          and obj["worker_id"])
    if not ok:
        raise LeaseCorrupt(
            f"{rel} is corrupt (not a {{worker_id, pid, expires_at_ms[, host, started, pidns]}} "
            "record); refusing to write — if no other worker is running, remove it: "
            "git gasp lease release --force")
    return LeaseRecord(obj["worker_id"], obj["pid"], obj["expires_at_ms"], obj.get("host"),
                       obj.get("started"), obj.get("pidns"))


def held_error(current: LeaseRecord) -> LeaseHeld:
    """Why no other worker can write while `current` holds the lease, and what to do."""
    verdict = current.holder()
    if verdict.state == holder.ALIVE:
        advice = f"wait for it to finish (or stop pid {current.pid})"
    else:
        advice = ("wait until it expires; if that worker is gone, `git gasp lease release "
                  "--force` removes it")
    return LeaseHeld(f"lease held by {current.describe()}; {advice}")


class Lease:
    """The lease of one worker on one agent root."""

    def __init__(self, root: str | os.PathLike, worker_id: str | None = None,
                 ttl_ms: int = DEFAULT_TTL_MS) -> None:
        self.root = str(Path(root))
        self.path = str(Path(self.root, LEASE_REL))
        self.worker_id = worker_id or default_worker_id()
        self.ttl_ms = ttl_ms
        self._held_until = 0  # expiry of the lease we last wrote (0: not held)
        self._start: tuple[int | None] | None = None  # this process's start time, once read
        self.reclaimed: LeaseRecord | None = None  # a dead or expired lease we took over
        # this worker's own lease we took under our pid (kept between its commands, pid 0,
        # or left by one of its processes that is gone)
        self.inherited: LeaseRecord | None = None
        # called with that lease when it happens (the CLI prints a note)
        self.on_reclaim: Callable[[LeaseRecord], None] | None = None

    def _beside(self, name: str) -> str:
        """A file named `name` in the lease's directory."""
        return os.path.join(os.path.dirname(self.path), name)

    # --- reading -------------------------------------------------------------
    def read(self) -> LeaseRecord | None:
        """The current lease record, None when there is none (raises LeaseCorrupt)."""
        try:  # a committed or planted link, FIFO or device never hangs or floods us
            data = read_regular_file(self.path, limit=MAX_LEASE_BYTES, root=self.root)
        except NotARegularFile as exc:
            raise LeaseError(f"{LEASE_REL} cannot be read: {exc}; remove it "
                             "(it is local-only and must not be committed)") from None
        except OSError as exc:
            raise LeaseError(f"{LEASE_REL} cannot be read: {exc.strerror}") from None
        return None if data is None else parse_lease(data)

    def _record(self) -> LeaseRecord:
        pid = os.getpid()
        return LeaseRecord(self.worker_id, pid, now_ms() + self.ttl_ms, holder.this_host(),
                           holder.start_time(pid), holder.pid_namespace())

    # --- taking --------------------------------------------------------------
    def ensure(self) -> LeaseRecord:
        """Hold the lease: take, renew or steal an expired one; raise LeaseHeld otherwise.

        Cheap while our own lease has more than half its TTL left and the file still
        names us (it is re-read every time: the check lives inside append).
        """
        taken_over = None
        for _ in range(8):
            current = self.read()
            if current is None:
                if self._create():
                    self.inherited = None  # a fresh hold: nothing was carried over to it
                    mine = self._mine()
                    if taken_over is not None:
                        self.reclaimed = taken_over
                        if self.on_reclaim is not None:
                            self.on_reclaim(taken_over)
                    return mine
                continue
            if self._is_mine(current) and not current.expired():
                if current.expires_at_ms - now_ms() < self.ttl_ms // 2:
                    self._renew(current)
                self._held_until = max(self._held_until, current.expires_at_ms)
                return self._mine()
            if current.worker_id == self.worker_id and not current.expired() and (
                    current.pid == 0 or current.dead()):
                # kept between this worker's commands (pid 0), or left by one of its
                # processes that is gone: this process takes it, under its own pid, so
                # no other process of the same worker can write beside it
                self._replace(current, self._record())
                self.inherited = current
                return self._mine()
            if not current.expired() and not current.dead():
                raise held_error(current)  # another process, whatever its worker's name
            taken_over = current
            self._steal(current)
        raise LeaseError(f"could not take {LEASE_REL}: it keeps changing under us")

    def _is_mine(self, rec: LeaseRecord) -> bool:
        """Whether `rec` was written by this process as this worker."""
        return rec.worker_id == self.worker_id and self.by_this_process(rec)

    def by_this_process(self, rec: LeaseRecord) -> bool:
        """Whether `rec` was written by this process, as any worker (host, pid and start
        time: a process is unique by them, a worker's name is not)."""
        if rec.pid != os.getpid():
            return False
        if rec.host is not None and rec.host != holder.this_host():
            return False
        return rec.started is None or rec.started == self._started()

    def _started(self) -> int | None:
        if self._start is None:
            self._start = (holder.start_time(os.getpid()),)
        return self._start[0]

    def _mine(self) -> LeaseRecord:
        rec = self.read()
        if rec is None or not self._is_mine(rec):
            who = rec.describe() if rec else "nobody"
            raise LeaseHeld(f"lease held by {who}; lost it while taking it")
        return rec

    def _create(self) -> bool:
        """Exclusive create with full content: write a private file, then link(2) it into
        place (fails if a lease exists), so no reader ever sees a half-written lease."""
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        refuse_links(self.path, self.root)
        rec = self._record()
        tmp = self._beside(f".lease.{os.getpid()}.{new_uuid()}.new")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL
                         | getattr(os, "O_NOFOLLOW", 0), 0o644)
        except OSError as exc:  # a read-only file system, no permission, no inodes
            raise LeaseError(f"cannot take {LEASE_REL}: {exc.strerror}") from None
        try:
            try:
                data = rec.to_bytes()
                if os.write(fd, data) != len(data):
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                os.fsync(fd)
            finally:
                os.close(fd)
            os.link(tmp, self.path)
        except FileExistsError:
            return False
        except OSError as exc:  # a full disk: nothing half-written is left behind
            raise LeaseError(f"cannot take {LEASE_REL}: {exc.strerror}") from None
        finally:
            remove_file(tmp)
        self._held_until = rec.expires_at_ms
        return True

    def _renew(self, current: LeaseRecord) -> None:
        self._replace(current, self._record())

    def settle(self) -> None:
        """After a command that held the lease only while it wrote (sync, snapshot): keep
        a lease this worker had kept between its commands (an open run's, pid 0) as it
        was found, release one taken fresh. A lease already lost is left alone."""
        try:
            if self.inherited is not None and self.inherited.pid == 0:
                self.keep_between_commands()  # the open run's next command takes it
            else:
                self.release()
        except LeaseError:
            pass

    def keep_between_commands(self) -> None:
        """Keep our lease after this process ends, for the commands that follow (the CLI
        while a run is open): rewritten with no pid (0), so no process's death frees it;
        it stays until it expires or this worker releases it."""
        current = self.read()
        if current is None or not self._is_mine(current):
            return  # not ours (another process's), or kept already
        self._replace(current, LeaseRecord(self.worker_id, 0, current.expires_at_ms,
                                           current.host))

    def _replace(self, current: LeaseRecord, rec: LeaseRecord) -> None:
        tmp = AtomicFile(self.path, root=self.root)  # a link on the way: UnsafePath
        try:
            tmp.write(rec.to_bytes())
            # re-check just before the rename: never replace another worker's lease
            again = self.read()
            if again != current:
                raise LeaseHeld(f"lease held by {again.describe() if again else 'nobody'}; "
                                "it changed while renewing")
            tmp.close()  # the rename
        finally:
            tmp.abort()  # a no-op once closed
        self._held_until = rec.expires_at_ms

    def _steal(self, seen: LeaseRecord) -> None:
        """Move the expired lease aside, then re-check that what moved was the expired one."""
        aside = self._beside(f".lease.stale.{os.getpid()}.{new_uuid()}")
        try:
            os.rename(self.path, aside)
        except FileNotFoundError:
            return  # someone else moved it; retry from the top
        try:
            moved = parse_lease(read_file(aside, limit=MAX_LEASE_BYTES))
        except LeaseCorrupt:
            moved = None
        if moved is not None and moved != seen and not moved.expired() and not moved.dead():
            # we moved a fresh lease another worker just took: put it back (no clobber)
            try:
                os.link(aside, self.path)
            except FileExistsError:
                pass
        remove_file(aside)

    # --- releasing -----------------------------------------------------------
    def release(self, *, force: bool = False) -> LeaseRecord | None:
        """Remove our lease, an expired one or one whose holder is dead (any lease with
        force); return what was removed."""
        try:
            current = self.read()
        except LeaseCorrupt:
            if not force:
                raise
            remove_file(self.path)
            return None
        if current is None:
            return None
        ours = self._is_mine(current) or (current.worker_id == self.worker_id
                                          and current.pid == 0)
        if not ours and not force and not current.expired() and not current.dead():
            verdict = current.holder()
            advice = ("it is running: let it finish" if verdict.state == holder.ALIVE
                      else "--force removes it anyway, if that worker is gone")
            raise LeaseHeld(f"lease held by {current.describe()}, not by {self.worker_id}; "
                            + advice)
        aside = self._beside(f".lease.release.{os.getpid()}.{new_uuid()}")
        try:
            os.rename(self.path, aside)
        except FileNotFoundError:
            return None
        remove_file(aside)
        self._held_until = 0
        return current

