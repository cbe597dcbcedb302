"""git's own listing of what differs between the index and a tree (``git diff-index
--cached``), parsed into the guard's sides: path -> (mode, blob id) for each side, with
git's status; and the refusal of a tree that names one path twice."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable

from git_gasp.base.errors import GaspError
from git_gasp.base.git import run
from git_gasp.odb.gitdirs import GitDirs

File = tuple[int, bytes]  # (mode, blob id)


_RAW = re.compile(rb":([0-7]{6}) ([0-7]{6}) ([0-9a-f]{40}|[0-9a-f]{64}) "
                rb"([0-9a-f]{40}|[0-9a-f]{64}) ([ADMTU])")


def diff_index(repo: GitDirs, index_path: str, tree: str
               ) -> Iterable[tuple[bytes, File | None, File | None, bytes]]:
    """(path, tree's entry, index's entry, status) for every path whose entry differs
    between the index at `index_path` and the tree-ish `tree` (``git diff-index
    --cached``; an unmerged path has status U and no index entry). Raises GaspError
    on anything it cannot read: the guard never passes what it could not check."""
    env = {"GIT_DIR": os.path.abspath(repo.controldir()), "GIT_INDEX_FILE": index_path}
    proc = run(repo.path, "diff-index", "--cached", "--raw", "-z", "--no-renames",
               "--no-abbrev", "--ignore-submodules=none", "--ita-invisible-in-index",
               tree, "--", env=env, check=False)
    if proc.returncode != 0:
        detail = proc.stderr.decode(errors="replace").strip().splitlines()
        raise GaspError("cannot compare the index with "
                        f"{tree[:12]}: {detail[-1] if detail else 'git diff-index failed'}")
    fields = proc.stdout.split(b"\x00")
    if fields and fields[-1] == b"":
        fields.pop()
    if len(fields) % 2:
        raise GaspError("cannot read git diff-index's output (odd record)")
    seen: dict[bytes, bytes] = {}  # path -> its status
    for i in range(0, len(fields), 2):
        match = _RAW.fullmatch(fields[i])
        if match is None:
            raise GaspError(f"cannot read git diff-index's output: {fields[i][:80]!r}")
        path = fields[i + 1]
        if path in seen and b"U" not in (seen[path], match[5]):  # unmerged: one per stage
            raise duplicate_entry(tree, path)
        seen[path] = match[5]
        old, new = _side(match[1], match[3], path), _side(match[2], match[4], path)
        yield path, old, None if match[5] == b"U" else new, match[5]


def duplicate_entry(commit: str, path: bytes) -> GaspError:
    """The refusal of a commit whose tree holds `path` twice: git reads the first entry,
    its index the last (``git fsck``: duplicateEntries)."""
    return GaspError(f"commit {commit[:12]} {os.fsdecode(path)}: its tree holds two entries "
                     "of this name (git fsck: duplicateEntries); the guard cannot tell which "
                     "one the commit grows from: repair the history before committing")


def _side(mode: bytes, sha: bytes, path: bytes) -> File | None:
    value = int(mode, 8)
    if value == 0:
        return None
    if stat.S_ISDIR(value):  # a sparse index's directory entry, never a file
        raise GaspError(f"the index holds {os.fsdecode(path)} as a directory entry "
                        "(a sparse index git did not expand): cannot check it")
    return value, sha
