"""The single-writer lease `.agent/lease`: {"worker_id", "pid", "expires_at_ms"}.

Taken by exclusive create, renewed by tmp+rename, an expired one stolen by
rename-then-recheck; a corrupt one is refused, never overwritten. Sound on a local
filesystem; advisory on network filesystems (spec Part V).
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import dataclass
from pathlib import Path

from git_gasp.base.errors import GaspError
from git_gasp.base.files import AtomicFile, refuse_links
from git_gasp.base.ids import new_uuid, now_ms

LEASE_REL = ".agent/lease"
DEFAULT_TTL_MS = 10 * 60 * 1000


class LeaseError(GaspError):
    """The lease cannot be taken or read."""


class LeaseHeld(LeaseError):
    """Another worker holds a live lease."""


class LeaseCorrupt(LeaseError):
    """The lease file does not hold a lease record."""


@dataclass(frozen=True)
class LeaseRecord:
    worker_id: str
    pid: int
    expires_at_ms: int

    def to_bytes(self) -> bytes:
        return (json.dumps({"worker_id": self.worker_id, "pid": self.pid,
                            "expires_at_ms": self.expires_at_ms}, separators=(",", ":"))
                + "\n").encode()

    def expired(self, at_ms: int | None = None) -> bool:
        return self.expires_at_ms <= (now_ms() if at_ms is None else at_ms)

    def describe(self) -> str:
        left = self.expires_at_ms - now_ms()
        when = f"expires in {left // 1000 + 1}s" if left > 0 else f"expired {-left // 1000}s ago"
        return f"{self.worker_id} (pid {self.pid}, {when})"


def default_worker_id() -> str:
    """$GASP_WORKER_ID, else `<user>@<host>` (stable across CLI invocations)."""
    env = os.environ.get("GASP_WORKER_ID")
    if env:
        return env
    user = os.environ.get("USER") or os.environ.get("LOGNAME") or str(os.getuid())
    return f"{user}@{socket.gethostname()}"


def parse_lease(data: bytes, rel: str = LEASE_REL) -> LeaseRecord:
    """Parse lease bytes (raises LeaseCorrupt with a remedy)."""
    try:
        obj = json.loads(data)
    except ValueError:
        obj = None
    ok = (type(obj) is dict and obj.keys() == {"worker_id", "pid", "expires_at_ms"}
          and type(obj["worker_id"]) is str and obj["worker_id"]
          and type(obj["pid"]) is int and type(obj["expires_at_ms"]) is int)
    if not ok:
        raise LeaseCorrupt(
            f"{rel} is corrupt (not a {{worker_id, pid, expires_at_ms}} record); refusing to "
            f"write — if no other worker is running, remove it: git gasp lease release --force")
    return LeaseRecord(obj["worker_id"], obj["pid"], obj["expires_at_ms"])


class Lease:
    """The lease of one worker on one agent root."""

    def __init__(self, root: Path, worker_id: str | None = None,
                 ttl_ms: int = DEFAULT_TTL_MS) -> None:
        self.root = Path(root)
        self.path = self.root / LEASE_REL
        self.worker_id = worker_id or default_worker_id()
        self.ttl_ms = ttl_ms
        self._held_until = 0  # expiry of the lease we last wrote (0: not held)

    # --- reading -------------------------------------------------------------
    def read(self) -> LeaseRecord | None:
        """The current lease record, None when there is none (raises LeaseCorrupt)."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise LeaseError(f"{LEASE_REL} cannot be read: {exc.strerror}") from None
        return parse_lease(data)

    def _record(self) -> LeaseRecord:
        return LeaseRecord(self.worker_id, os.getpid(), now_ms() + self.ttl_ms)

    # --- taking --------------------------------------------------------------
    def ensure(self) -> LeaseRecord:
        """Hold the lease: take, renew or steal an expired one; raise LeaseHeld otherwise.

        Cheap while our own lease has more than half its TTL left and the file still
        names us (it is re-read every time: the check lives inside append).
        """
        for _ in range(8):
            current = self.read()
            if current is None:
                if self._create():
                    return self._mine()
                continue
            if current.worker_id == self.worker_id and not current.expired():
                if current.expires_at_ms - now_ms() < self.ttl_ms // 2:
                    self._renew(current)
                self._held_until = max(self._held_until, current.expires_at_ms)
                return self._mine()
            if not current.expired():
                raise LeaseHeld(f"lease held by {current.describe()}; "
                                f"wait, or release it with `git gasp lease release`")
            self._steal(current)
        raise LeaseError(f"could not take {LEASE_REL}: it keeps changing under us")

    def _mine(self) -> LeaseRecord:
        rec = self.read()
        if rec is None or rec.worker_id != self.worker_id:
            who = rec.describe() if rec else "nobody"
            raise LeaseHeld(f"lease held by {who}; lost it while taking it")
        return rec

    def _create(self) -> bool:
        """Exclusive create with full content: write a private file, then link(2) it into
        place (fails if a lease exists), so no reader ever sees a half-written lease."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        refuse_links(self.path, self.root)
        rec = self._record()
        tmp = self.path.with_name(f".lease.{os.getpid()}.{new_uuid()}.new")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                     0o644)
        try:
            os.write(fd, rec.to_bytes())
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, self.path)
        except FileExistsError:
            return False
        finally:
            tmp.unlink(missing_ok=True)
        self._held_until = rec.expires_at_ms
        return True

    def _renew(self, current: LeaseRecord) -> None:
        rec = self._record()
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
        aside = self.path.with_name(f".lease.stale.{os.getpid()}.{new_uuid()}")
        try:
            os.rename(self.path, aside)
        except FileNotFoundError:
            return  # someone else moved it; retry from the top
        try:
            moved = parse_lease(aside.read_bytes())
        except LeaseCorrupt:
            moved = None
        if moved is not None and moved != seen and not moved.expired():
            # we moved a fresh lease another worker just took: put it back (no clobber)
            try:
                os.link(aside, self.path)
            except FileExistsError:
                pass
        aside.unlink(missing_ok=True)

    # --- releasing -----------------------------------------------------------
    def release(self, *, force: bool = False) -> LeaseRecord | None:
        """Remove our lease (or any lease with force); return what was removed."""
        try:
            current = self.read()
        except LeaseCorrupt:
            if not force:
                raise
            self.path.unlink(missing_ok=True)
            return None
        if current is None:
            return None
        if current.worker_id != self.worker_id and not force and not current.expired():
            raise LeaseHeld(f"lease held by {current.describe()}, not by {self.worker_id}; "
                            "use --force to remove it anyway")
        aside = self.path.with_name(f".lease.release.{os.getpid()}.{new_uuid()}")
        try:
            os.rename(self.path, aside)
        except FileNotFoundError:
            return None
        aside.unlink(missing_ok=True)
        self._held_until = 0
        return current
