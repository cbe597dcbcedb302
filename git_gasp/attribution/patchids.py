"""Patch identities of commits: `git patch-id --stable` over their zero-context diffs,
kept in ``<git common dir>/gasp/patch-ids`` so a commit's id is computed once.

A patch id is a hash of a commit's diff with line numbers and whitespace left out, the
same for a commit and its rebased copy. The diffs are `diffranges.diff_commits`' (one
`git diff-tree` for every commit asked, renames found, no context lines), read by one
`git patch-id --stable`: without context, a rebase onto lines that moved or changed
next to the change keeps its id (git's own three lines of context would not). A commit
adding nothing but a mode change or an empty commit has no id. The ids depend only on
the commit, so the cache never goes stale; an unreadable cache is computed afresh.
"""

from __future__ import annotations

import os

from git_gasp.attribution.diffranges import diff_commits
from git_gasp.base import git
from git_gasp.base.errors import GaspError
from git_gasp.base.files import SMALL_FILE, atomic_write, read_file
from git_gasp.odb.gitdirs import locate

CACHE = os.path.join("gasp", "patch-ids")
HEADER = b"git-gasp patch-ids 1 (-U0 -M, --stable)\n"
MAX_CACHED = 200_000  # entries: past this the cache starts again


def _cache_path(cwd: str) -> str | None:
    try:
        dirs = locate(cwd)
    except (OSError, ValueError):
        return None
    return None if dirs is None else os.path.join(dirs.commondir(), CACHE)


def _read(path: str | None) -> dict[str, str | None]:
    if path is None:
        return {}
    try:
        data = read_file(path, limit=SMALL_FILE)
    except (OSError, ValueError, GaspError):
        return {}
    if not data.startswith(HEADER):
        return {}
    out: dict[str, str | None] = {}
    for line in data[len(HEADER):].decode("ascii", "replace").splitlines():
        sha, _, pid = line.partition(" ")
        out[sha] = pid or None
    return out


def parse_patch_ids(data: bytes) -> dict[str, str]:
    """`git patch-id` output (``PATCH-ID COMMIT`` lines) as commit -> patch id."""
    out: dict[str, str] = {}
    for line in data.decode("ascii", "replace").splitlines():
        parts = line.split()
        if len(parts) == 2:
            out[parts[1]] = parts[0]
    return out


def patch_ids(cwd: str, commits: list[str], *, diffs: bytes | None = None
              ) -> dict[str, str | None]:
    """Each of `commits` (full ids) -> its patch id (None: it changes no line). The ones
    not cached are computed from `diffs` (their `diff_commits` output, when the caller
    has it) or from one `diff_commits`, then cached."""
    path = _cache_path(cwd)
    cached = _read(path)
    missing = [c for c in commits if c not in cached]
    if missing:
        data = diffs if diffs is not None else diff_commits(cwd, missing)
        proc = git.run(cwd, "patch-id", "--stable", input=data, check=False)
        found = parse_patch_ids(proc.stdout) if proc.returncode == 0 else {}
        if proc.returncode == 0:
            if len(cached) + len(missing) > MAX_CACHED:
                cached = {}
            cached.update({c: found.get(c) for c in missing})
            _write(path, cached)
        else:
            cached = {**cached, **found}
    return {c: cached.get(c) for c in commits}


def _write(path: str | None, table: dict[str, str | None]) -> None:
    """Replace the cache (a cache that cannot be written is no error: ids are
    computed again next time)."""
    if path is None:
        return
    body = "".join(f"{c} {p or ''}\n" for c, p in sorted(table.items())).encode()
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        atomic_write(path, HEADER + body)
    except (OSError, ValueError, GaspError):
        pass
