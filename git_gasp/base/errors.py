"""Errors that reach the user as one line (never a traceback)."""

from __future__ import annotations


class GaspError(Exception):
    """A failure the CLI reports as `git gasp: error: <message>` with `exit_code`."""

    exit_code = 1

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(GaspError):
    """Bad arguments or a path that cannot be used at all (exit 2)."""

    exit_code = 2


class NotAGitRepo(GaspError):
    """The path is not inside a git work tree."""


class FormatError(GaspError, ValueError):
    """Bad input bytes or values: a log line, a manifest, a snapshot, a pack, a lease.

    It is a ValueError for the parsers' callers and a GaspError for the CLI, so a
    protocol or store error reaches the user as one line with no translation.
    """
