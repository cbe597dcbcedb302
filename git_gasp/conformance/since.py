"""`git gasp check --since REV`: adopt the gate on a repository whose old history
predates the rules. What the checks find in commits reachable from REV, or on lines of
the log that REV already held (while the log still starts with REV's bytes), is reported
as a note; everything after must pass. A failure of the working tree (check 4's "does
not extend HEAD", which names no commit) is never forgiven."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from git_gasp.base import git
from git_gasp.base.errors import UsageError
from git_gasp.base.files import open_file
from git_gasp.conformance.report import CheckResult


@dataclass(frozen=True)
class Baseline:
    """REV and what it covers: its commit, every commit reachable from it, and how many
    lines the log held there."""

    rev: str
    commit: str
    commits: frozenset[str]
    log_lines: int
    log_bytes: int = 0
    log_sha256: str = ""

    def covers(self, commit: str | None, path: str | None, line: int | None,
               log_rel: str) -> bool:
        """Whether a failure at (`commit`, `path`, `line`) predates REV (the lines REV's
        log held count only when the log on disk still starts with REV's log)."""
        if commit is not None:
            return commit in self.commits
        return line is not None and path == log_rel and line <= self.log_lines

    def log_unchanged(self, root: str | os.PathLike, log_rel: str) -> bool:
        """Whether the log on disk starts with the bytes REV's log held."""
        try:
            with open_file(os.path.join(root, log_rel)) as f:
                head = f.read(self.log_bytes)
        except OSError:
            return False
        return len(head) == self.log_bytes and hashlib.sha256(head).hexdigest() == self.log_sha256


def baseline(root: Path, rev: str, log_rel: str) -> Baseline:
    """The Baseline of revision `rev` in the repository at `root` (UsageError when `rev`
    names no commit)."""
    commit = git.resolve_commit(root, rev)
    if commit is None:
        raise UsageError(f"--since {rev}: not a commit of this repository")
    listed = git.run(root, "rev-list", commit, check=False)
    commits = frozenset(listed.stdout.decode("ascii", "replace").split())
    blob = git.run(root, "cat-file", "blob", f"{commit}:./{log_rel}", check=False)
    data = blob.stdout if blob.returncode == 0 else b""
    return Baseline(rev, commit, commits, data.count(b"\n"), len(data),
                    hashlib.sha256(data).hexdigest())


def grandfather(results: list[CheckResult], base: Baseline, log_rel: str,
                root: str | os.PathLike | None = None) -> int:
    """Turn every failure that predates `base` into a note of its check; return how many
    were turned. Check 4's failures count only by their commit; lines of the log count
    only while the log at `root` still starts with REV's (an edit of an old line in the
    work tree is not old history)."""
    moved = 0
    lines_old = root is None or base.log_unchanged(root, log_rel)
    for res in results:
        kept = []
        for failure in res.failures:
            line = failure.line if lines_old else None
            if res.number == 4 and failure.commit is None:
                old = False  # the working tree or the index: never history before REV
            else:
                old = base.covers(failure.commit, failure.path, line, log_rel)
            if old:
                loc = failure.location()
                res.notes.append(f"before --since {base.rev} ({base.commit[:12]}): "
                                 + (f"{loc}: " if loc else "") + failure.message)
                moved += 1
            else:
                kept.append(failure)
        res.failures = kept
    return moved
