"""Paging as git pages: on a terminal only, through the pager git would use (`git var
GIT_PAGER`: ``GIT_PAGER``, ``core.pager``, ``PAGER``, else ``less``), with git's
``LESS=FRX`` and ``LV=-c`` defaults, not when git already pages
(``GIT_PAGER_IN_USE``) or the user said ``--no-pager``."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from git_gasp.base.git import run


def pager_command() -> str | None:
    """The pager git would run here, or None for none (``cat`` or empty)."""
    try:
        proc = run(os.getcwd(), "var", "GIT_PAGER", check=False, inherit_git_env=True)
    except Exception:  # noqa: BLE001 - no git: no pager
        return None
    cmd = proc.stdout.decode(errors="replace").strip() if proc.returncode == 0 else ""
    return None if cmd in ("", "cat") else cmd


def should_page(stream: TextIO, no_pager: bool) -> bool:
    """Whether output to `stream` goes through a pager."""
    if no_pager or os.environ.get("GIT_PAGER_IN_USE"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


@contextmanager
def paged(no_pager: bool = False) -> Iterator[tuple[TextIO, bool]]:
    """`(stream, paging)`: write to `stream`; on a terminal it is the pager's input."""
    cmd = pager_command() if should_page(sys.stdout, no_pager) else None
    if cmd is None:
        yield sys.stdout, False
        return
    env = dict(os.environ, GIT_PAGER_IN_USE="true")
    env.setdefault("LESS", "FRX")
    env.setdefault("LV", "-c")
    try:
        proc = subprocess.Popen(cmd, shell=True, stdin=subprocess.PIPE, env=env,
                                text=True, encoding="utf-8", errors="replace")
    except OSError:
        yield sys.stdout, False
        return
    assert proc.stdin is not None
    try:
        yield proc.stdin, True
    except BrokenPipeError:
        pass  # the user quit the pager early: not an error
    finally:
        try:
            proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            proc.wait()
        except KeyboardInterrupt:  # as git: the pager owns the terminal until it ends
            proc.wait()
