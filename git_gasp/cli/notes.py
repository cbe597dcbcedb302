"""Notes the commands print on stderr beside their work (no click: the check's fast
path imports this)."""

from __future__ import annotations

import sys

from git_gasp.store.attributes import missing_driver_note


def driver_note(root) -> None:
    """Warn on stderr, in one line with the fix, when .gitattributes names the gasp merge
    driver but no git config defines it (a plain `git pull` would text-merge the log)."""
    note = missing_driver_note(root)
    if note:
        sys.stderr.write(f"git gasp: {note}\n")
        sys.stderr.flush()
