"""The one error handler of the CLI: a known error (`GaspError`) reaches the user as
one line ``git gasp: error: …`` and its exit code, never a traceback. Used by the fast
paths (`cli.main`), the click group (`cli.group`) and the manual (`cli.help`); and
`leave`, how the fast paths exit."""

from __future__ import annotations

import errno
import os
import sys

from git_gasp.base.errors import GaspError

# typing costs 6 ms of --version and of every git hook (bench_startup, bench_guard), so
# NoReturn is imported for the type checker only
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

# errors of the machine a writer can meet anywhere: one line and exit 1, as a GaspError
_ENVIRONMENT = ("ENOSPC", "EDQUOT", "EROFS", "EACCES", "EPERM", "EIO", "EMFILE", "ENFILE",
                "ENAMETOOLONG")


def _of_environment(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in {
        getattr(errno, name) for name in _ENVIRONMENT if hasattr(errno, name)}


def _error(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def exit_for_error(exc: BaseException) -> NoReturn:
    """The one error handler's end: a known error as one line and its exit code."""
    if isinstance(exc, GaspError):
        _error(f"git gasp: error: {exc}")
        sys.exit(exc.exit_code)
    if isinstance(exc, KeyboardInterrupt):
        _error("git gasp: interrupted")
        sys.exit(130)
    if isinstance(exc, BrokenPipeError):  # the reader left (`| head`): no second error at exit
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        sys.exit(0)
    if _of_environment(exc) and not os.environ.get("GASP_DEBUG"):
        assert isinstance(exc, OSError)  # the machine, not git-gasp: a full disk, …
        where = f": {exc.filename}" if exc.filename else ""
        _error(f"git gasp: error: {exc.strerror or exc}{where}")
        sys.exit(1)
    if not isinstance(exc, Exception) or os.environ.get("GASP_DEBUG"):
        raise exc
    # last line of defence: one line, never a traceback
    _error(f"git gasp: internal error: {type(exc).__name__}: {exc} (set GASP_DEBUG=1 for details)")
    sys.exit(3)


def leave(code: int) -> NoReturn:
    """Exit with `code` at once, nothing torn down (the log's objects are not freed one
    by one)."""
    os._exit(code)
