"""How git reaches a remote from the state's worktree (which remote: ``gasp.remote``,
`store.joining.configured_remote`). A relative remote URL (``../shared.git``) means
what it means in the project, as git resolves it from the project's work tree, not
from inside ``.git/gasp-state``.
"""

from __future__ import annotations

import os
from pathlib import Path

from git_gasp.base import git


def _is_relative_path(url: str) -> bool:
    """A local path relative to the work tree: no scheme, not scp-like, not absolute."""
    if "://" in url or os.path.isabs(url) or url.startswith("~"):
        return False
    head = url.split("/", 1)[0]
    return ":" not in head


def project_top(root: Path) -> Path:
    """The project's main work tree, whose directory a relative remote URL is relative
    to (the state's worktree is a linked worktree of the same repository)."""
    listing = git.out(root, "worktree", "list", "--porcelain")
    first = listing.split("\n", 1)[0]
    return Path(first[len("worktree "):]) if first.startswith("worktree ") else root


def relative_url_config(root: Path) -> list[str]:
    """``-c url.ABS.insteadOf=REL`` options so git in the state's worktree `root` reaches
    each remote whose URL is relative where the project reaches it."""
    proc = git.run(root, "config", "-z", "--get-regexp", r"^remote\..*\.(push)?url$",
                   check=False)
    if proc.returncode != 0:
        return []
    top = None
    out: list[str] = []
    for entry in proc.stdout.split(b"\0"):
        _key, _, value = os.fsdecode(entry).partition("\n")
        if not value or not _is_relative_path(value):
            continue
        top = top or project_top(root)
        absolute = os.path.normpath(os.path.join(top, value))
        out += ["-c", f"url.{absolute}.insteadOf={value}"]
    return out
