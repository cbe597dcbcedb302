"""The guard's rules for a commit the runtime builds itself (no index involved).

`check_tree` applies exactly what the pre-commit guard applies — the append-only
one-parent rule and checks 1, 5 and 7 on the lines appended to a log — to a new tree
given as path -> (mode, blob id), against one parent commit (HEAD by default). It is
how `commit-run`, the live hook's boundary commit, `identity amend` and `fork` obey
the same rules as a commit made by hand.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from git_gasp.guard.commit_guard import _Guard
from git_gasp.guard.committed_log_cache import CommittedLogCache
from git_gasp.guard.rejection import Rejection
from git_gasp.guard.secrets_rule import check_secrets
from git_gasp.guard.staged import File

if TYPE_CHECKING:  # dulwich's types: dulwich loads only where objects are read
    from git_gasp.odb.gitdirs import GitDirs


def check_tree(repo: GitDirs, files: dict[bytes, File], parent: bytes | None,
               *, cache: bool = True) -> list[Rejection]:
    """Every reason the commit of tree `files` on top of `parent` must be refused
    (a one-parent commit: no merge rule)."""
    facts = CommittedLogCache(repo.commondir()) if cache else None
    guard = _Guard.from_sides(repo, files, {}, [], cache=facts)
    guard.head = guard._files_of_commit(parent)
    for root, changed in guard.guarded().items():
        guard.check_root(root, changed)
    guard.check_local_only()
    check_secrets(guard)
    if not guard.rejections:
        guard.save_staged()
    return guard.rejections


def refusal_line(rejections: list[Rejection]) -> str:
    """The one line a runtime commit is refused with: the first problem, and how many."""
    ordered = sorted(rejections, key=lambda r: (r.path, r.line or 0))
    first = ordered[0]
    more = len(ordered) - 1
    tail = f" (and {more} more problem{'s' * (more != 1)})" if more else ""
    return f"commit refused by the guard: {first.to_text()}{tail}"
