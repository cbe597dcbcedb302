"""The log on disk: torn-line-aware reading and durable, lease-checked append.

Durable append = one write of the whole batch to an O_APPEND descriptor, then
fsync (and an fsync of the directory when the log was created). The lease is
checked inside `append`, and so is the log's size: bytes we did not write (another
writer, a torn tail) stop the append instead of being built upon.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from git_gasp.base.errors import GaspError
from git_gasp.base.fileops import sync_dir
from git_gasp.base.files import open_file, refuse_links
from git_gasp.base.git import run
from git_gasp.protocol.envelope import (
    OPS_KIND,
    EnvelopeError,
    Event,
    parse_line,
    serialize,
    writable_problem,
)
from git_gasp.protocol.vocab import ENTITY_CREATING
from git_gasp.store.agentfs import AgentFileError, read_regular
from git_gasp.store.lease import Lease
from git_gasp.store.redacting import redact_events


class LogError(GaspError):
    """The log cannot be read or extended as it stands."""


class WriteRefused(EnvelopeError):
    """An event of a batch the writer refuses: check 1 could not read it back (a NaN, an
    integer beyond 64 bits, a lone surrogate, too deep, …) or a known payload field has
    the wrong type. Nothing of the batch was written.

    `problem` is the reason naming the field (``payload.metadata.x: …``), `field` that
    field's path (None when the reason names none), `event` the refused event."""

    def __init__(self, rel: str, event: Event, problem: str) -> None:
        self.event = event
        self.problem = _short_field(problem)
        head = problem.split(": ", 1)[0]
        self.field = head if head != problem and " " not in head else None
        super().__init__(f"{rel}: refusing to append {event.kind} event {event.id}: "
                         f"{self.problem}; nothing was written")


def _short_field(problem: str, limit: int = 120) -> str:
    """`problem` with an absurdly long field path (a deep nesting) cut in the middle."""
    head, sep, rest = problem.partition(": ")
    if not sep or len(head) <= limit or " " in head:
        return problem
    return f"{head[:limit - 40]}…{head[-30:]}{sep}{rest}"


def refuse_unwritable(rel: str, events: Iterable[Event]) -> None:
    """Raise WriteRefused for the first event that must not be appended (the one gate:
    `writable_problem`, strict JSON as check 1 reads it plus known payload field types)."""
    for event in events:
        problem = writable_problem(event)
        if problem:
            raise WriteRefused(rel, event, problem)


class TornLogError(LogError):
    """The last line of the log lacks its newline (a write was interrupted, or the line
    is complete and only the newline is missing); nothing is appended until it is fixed.

    `complete` says the line is a whole event (the fix is to append a newline, never to
    remove it); `offset` is where the partial line starts; `cut` the byte length the
    advised `truncate -s` keeps (None when no truncate is advised)."""

    def __init__(self, rel: str, line: int, offset: int, partial: bytes,
                 batch: tuple[int, int, str] | None = None, *, complete: bool = False,
                 committed: int = 0) -> None:
        self.line, self.offset, self.complete = line, offset, complete
        self.cut: int | None = None
        tail = partial[:60].decode("utf-8", "replace")
        if complete:
            super().__init__(
                f"{rel}:{line}: the last line is a complete event but lacks its terminating "
                f"newline; nothing was written — append the newline with "
                f"`printf '\\n' >> {rel}` (do not remove the line: it is a recorded event)")
            return
        what = (f"{rel}:{line}: torn final line ({len(partial)} bytes without a newline "
                f"that do not parse: {tail!r}…)")
        if committed > offset:  # the partial line itself is in HEAD's blob
            super().__init__(
                f"{what}; nothing was written — the partial line is already committed in "
                f"HEAD (HEAD's {rel} is {committed} bytes), so it cannot be cut off without "
                f"rewriting history (`git log -- {rel}` finds the commit that holds it)")
            return
        cut, keep, extra = offset, line - 1, ""
        if batch is not None:  # (line, offset, kind) of a domain event left without its pair
            extra = (f"; line {batch[0]} ({batch[2]}) lost its ops pair in the same "
                     "interrupted batch")
            if committed > batch[1]:
                extra += " (it is committed in HEAD, so it stays)"
            else:
                cut, keep = batch[1], batch[0] - 1
        self.cut = cut
        super().__init__(
            f"{what}{extra}; nothing was written — remove the interrupted batch with "
            f"`truncate -s {cut} {rel}` (keeps lines 1-{keep})")


def torn_error(rel: str, data: bytes, root: str | os.PathLike | None = None) -> TornLogError:
    """Describe the unterminated tail of `data` (the whole log): a complete line that only
    lacks its newline, or a torn line (with a domain event whose pair was cut off).

    With `root` (the agent root) the advice never cuts into HEAD's committed log."""
    start = data.rfind(b"\n") + 1
    partial = data[start:]
    line = data.count(b"\n") + 1
    try:
        parse_line(partial, line)
    except (EnvelopeError, RecursionError):
        pass
    else:
        return TornLogError(rel, line, start, partial, complete=True)
    batch = None
    if start:
        prev = data.rfind(b"\n", 0, start - 1) + 1
        try:
            event = parse_line(data[prev:start - 1], line - 1)
        except (EnvelopeError, RecursionError):
            event = None
        if event is not None and event.kind != OPS_KIND and (
                event.kind in ENTITY_CREATING or b'"kind":' not in partial
                or b'"kind":"state.ops_applied"' in partial) and (
                event.id.encode() in partial or b'"causation_id"' not in partial):
            batch = (line - 1, prev, event.kind)
    committed = committed_size(root, rel) if root is not None else 0
    return TornLogError(rel, line, start, partial, batch, committed=committed)


def committed_size(root: str | os.PathLike, rel: str) -> int:
    """The size of `rel`'s blob in HEAD (0 when there is none or git cannot tell)."""
    try:
        proc = run(root, "cat-file", "-s", f"HEAD:./{rel}", check=False)
    except GaspError:
        return 0
    try:
        return int(proc.stdout) if proc.returncode == 0 else 0
    except ValueError:
        return 0


def parse_tail(data: bytes, start: int, first_line: int, rel: str,
               root: str | os.PathLike | None = None) -> list[Event]:
    """Parse every line of data[start:]; raise LogError / TornLogError on the first bad one.

    `data` is the whole log (a torn tail's advice counts offsets in it); `root`, the agent
    root, keeps that advice from cutting into HEAD's committed log."""
    events: list[Event] = []
    number = first_line
    pos = start
    end = len(data)
    while pos < end:
        nl = data.find(b"\n", pos)
        if nl < 0:
            raise torn_error(rel, data, root)
        try:
            events.append(parse_line(data[pos:nl], number))
        except (EnvelopeError, RecursionError) as exc:
            raise LogError(f"{rel}:{number}: not a valid event: {exc}; the log must be repaired "
                           "before anything is appended (see `git gasp check`)") from None
        pos = nl + 1
        number += 1
    return events


class EventStore:
    """Append-only access to one log file, guarded by a lease."""

    def __init__(self, root: str | os.PathLike, rel: str, lease: Lease, *,
                 fsync: bool = True) -> None:
        self.root = str(Path(root))
        self.rel = rel
        self.path = str(Path(self.root, rel))
        self.lease = lease
        self.fsync = fsync
        self.size = 0  # bytes of the log we have read or written
        self.line_count = 0

    def check_path(self) -> bool:
        """Refuse a log that is not a regular file of this repo (a symlink, a FIFO, a
        directory, or under a symlinked directory); return whether it exists."""
        for parent in reversed([str(p) for p in Path(self.rel).parents]):
            if parent != "." and Path(self.root, parent).is_symlink():
                raise LogError(f"{parent}/ (holding {self.rel}) is a symlink; git would commit "
                               "the link, not the log — replace it with the real directory")
        try:
            st = os.lstat(self.path)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise LogError(f"{self.rel} cannot be read: {exc.strerror}") from None
        if not stat.S_ISREG(st.st_mode):
            self._read_regular()  # raises the precise refusal
        return True

    def _read_regular(self) -> bytes:
        try:
            return read_regular(self.root, self.rel)
        except AgentFileError as exc:
            raise LogError(str(exc)) from None

    def read_bytes(self) -> bytes:
        """The whole log (b"" when it does not exist yet); LogError when it is not a
        regular file of the repo."""
        if not self.check_path():
            return b""
        return self._read_regular()

    def mark_read(self, data: bytes, line_count: int | None = None) -> None:
        """Record that `data` (the whole log, of `line_count` lines) has been read."""
        self.mark_read_size(len(data), data.count(b"\n") if line_count is None else line_count)

    def mark_read_size(self, size: int, line_count: int) -> None:
        """Record that the first `size` bytes (`line_count` lines) have been accounted for."""
        self.size = size
        self.line_count = line_count

    def new_events(self) -> list[Event]:
        """Events appended by someone else since we last read or wrote (usually none)."""
        try:
            size = os.stat(self.path).st_size
        except FileNotFoundError:
            size = 0
        if size == self.size:
            return []
        if size < self.size:
            raise LogError(f"{self.rel} shrank from {self.size} to {size} bytes under us "
                           "(truncated or rewritten?); refusing to append")
        with open_file(self.path) as fh:
            fh.seek(self.size)
            tail = fh.read()
        try:
            events = parse_tail(tail, 0, self.line_count + 1, self.rel)
        except TornLogError:  # describe it in the whole file: offsets, lines, HEAD
            raise torn_error(self.rel, self._read_regular(), self.root) from None
        self.size += len(tail)
        self.line_count += len(events)
        return events

    def append(self, events: Iterable[Event]) -> int:
        """Durably append a batch (one write, one fsync); return the new line count.

        Every event of the batch is redacted first, in place (`redacting.redact_events`:
        the caller's events are then what was written), and must pass `writable_problem`
        (WriteRefused, and nothing of the batch is written, when one does not). Checks
        the lease and that the file is still exactly as long as we left it.
        """
        batch = list(events)
        redact_events(batch)
        refuse_unwritable(self.rel, batch)
        data = b"".join(serialize(e) for e in batch)
        if not data:
            return self.line_count
        self.lease.ensure()
        created = not self.check_path()
        if created:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
        fd = _open_append(self.path, self.rel)
        try:
            size = os.fstat(fd).st_size
            if size != self.size:
                raise LogError(f"{self.rel} is {size} bytes but this worker last saw {self.size}; "
                               "another writer appended without the lease — reopen the state")
            _write_durably(fd, data, size, self.rel, self.fsync)
        finally:
            os.close(fd)
        self.size += len(data)
        self.line_count += data.count(b"\n")
        if created and self.fsync:
            _fsync_dir(os.path.dirname(self.path), self.rel)
        return self.line_count


def _open_append(path: str, rel: str) -> int:
    """The log open for append: never through a link, never blocking on a FIFO put there
    since `check_path` looked, and only a regular file."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_NONBLOCK", 0), 0o644)
    except OSError as exc:
        raise LogError(f"{rel} cannot be opened for append: {exc.strerror}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise LogError(f"{rel} is not a regular file; refusing to append to it")
    return fd


def _write_durably(fd: int, data: bytes, old_size: int, rel: str, fsync: bool) -> None:
    """Write all of `data` to the O_APPEND descriptor `fd` (then fsync); on any failure cut
    the file back to `old_size` so no torn tail is left, and raise LogError."""
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            if written <= 0:
                raise OSError(0, "the write made no progress")
            view = view[written:]
        if fsync:
            os.fsync(fd)
    except OSError as exc:
        why = exc.strerror or str(exc)
        try:
            os.ftruncate(fd, old_size)
        except OSError as cut:
            raise LogError(f"{rel}: append failed ({why}) and the partial write could not be "
                           f"removed ({cut.strerror}); truncate it with "
                           f"`truncate -s {old_size} {rel}`") from None
        raise LogError(f"{rel}: append failed ({why}); nothing was written") from None


def _fsync_dir(directory: str, rel: str) -> None:
    try:
        sync_dir(directory)
    except OSError as exc:
        raise LogError(f"{rel} was written but its directory could not be synced: "
                       f"{exc.strerror}") from None


def append_line_file(path: str | os.PathLike, data: bytes, *, fsync: bool = True,
                     root: str | os.PathLike | None = None) -> None:
    """Durably append bytes to a plain append-only file (facts, journal).

    A link at `path`, or on the way to it from `root`, is refused (UnsafePath). A
    failed write or fsync leaves the file as it was and raises LogError."""
    refuse_links(path, root)
    path = str(Path(path))
    created = not Path(path).exists()
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fd = _open_append(path, path)
    try:
        _write_durably(fd, data, os.fstat(fd).st_size, str(path), fsync)
    finally:
        os.close(fd)
    if created and fsync:
        _fsync_dir(os.path.dirname(path) or ".", path)
