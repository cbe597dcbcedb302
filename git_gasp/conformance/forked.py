"""Run one function in a forked child while the caller goes on, so that two independent
CPU-bound jobs use two cores; where a fork is not possible or safe, or the child dies,
the function simply runs in the caller when its result is asked for.

The result travels back pickled through a pipe. Nothing else is shared: whatever the
child changes in memory is lost, so the function must hand back all it produces (files
it writes, e.g. caches, stay written).
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

NO_FORK_ENV = "GASP_NO_FORK"  # set (to anything but "" or "0"): never fork


def fork_allowed() -> bool:
    """True where forking this process is safe: a POSIX fork exists, this process runs no
    other thread (a fork copies only the calling one, with the others' locks held), and
    the user did not turn it off (``GASP_NO_FORK``)."""
    if not hasattr(os, "fork") or sys.platform == "darwin":  # macOS: fork breaks its libs
        return False
    if os.environ.get(NO_FORK_ENV, "") not in ("", "0"):
        return False
    threading = sys.modules.get("threading")  # never imported: no thread was started by it
    return threading is None or threading.active_count() == 1


class Forked:
    """`fn()` started in a forked child (or deferred, see the module doc); `result()`
    returns its value or raises what it raised."""

    def __init__(self, fn: Callable[[], T], *, fork: bool = True) -> None:
        self._fn = fn
        self._pid: int | None = None
        self._fd: int | None = None
        self._done = False
        self._value: T | None = None
        if fork and fork_allowed():  # `fork=False`: the caller knows `fn` is short
            self._start()

    @property
    def forked(self) -> bool:
        """True while (or after) `fn` runs in a child process."""
        return self._pid is not None

    def _start(self) -> None:
        try:
            read, write = os.pipe()
        except OSError:
            return
        try:
            pid = os.fork()
        except OSError:  # no memory or process slots: run in the caller instead
            os.close(read)
            os.close(write)
            return
        if pid == 0:  # the child: never returns into the caller's stack
            code = 0
            try:
                os.close(read)
                try:
                    payload = pickle.dumps((True, self._fn()), pickle.HIGHEST_PROTOCOL)
                except BaseException as exc:  # noqa: BLE001 - handed to the parent
                    try:
                        payload = pickle.dumps((False, exc), pickle.HIGHEST_PROTOCOL)
                    except Exception:  # noqa: BLE001 - an exception that cannot pickle
                        payload = pickle.dumps((False, RuntimeError(repr(exc))))
                view = memoryview(payload)
                while view:
                    view = view[os.write(write, view):]
            except BaseException:  # noqa: BLE001 - the parent reruns fn in-process
                code = 1
            finally:
                os._exit(code)
        os.close(write)
        self._pid, self._fd = pid, read

    def result(self) -> T:
        """The function's value: the child's, or computed here when there was no child or
        it ended without handing one back (killed, out of memory)."""
        if not self._done:
            self._value = self._collect()
            self._done = True
        return self._value  # type: ignore[return-value]

    def _collect(self) -> T:
        payload = self._drain()
        if payload:
            try:
                ok, value = pickle.loads(payload)
            except Exception:  # noqa: BLE001 - truncated: the child died mid-write
                ok, value = None, None
            if ok is True:
                return value
            if ok is False:
                raise value
        return self._fn()

    def _drain(self) -> bytes:
        if self._fd is None:
            return b""
        chunks = []
        try:
            while True:
                chunk = os.read(self._fd, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            os.close(self._fd)
            self._fd = None
            self._reap()
        return b"".join(chunks)

    def _reap(self) -> None:
        if self._pid is None:
            return
        try:
            os.waitpid(self._pid, 0)
        except ChildProcessError:
            pass

    def cancel(self) -> None:
        """Stop a child whose result is no longer wanted (and reap it)."""
        if self._fd is None or self._done:
            return
        try:
            os.kill(self._pid, signal.SIGKILL)  # type: ignore[arg-type]
        except ProcessLookupError:
            pass
        os.close(self._fd)
        self._fd = None
        self._reap()
        self._done = True
