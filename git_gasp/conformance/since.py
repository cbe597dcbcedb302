"""`git gasp check --since REV`: adopt the gate on a repository whose old history
predates the rules. What the checks find in commits reachable from REV, or on lines of
the log that REV already held, is reported as a note; everything after must pass."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from git_gasp.base import git
from git_gasp.base.errors import UsageError
from git_gasp.conformance.report import CheckResult


@dataclass(frozen=True)
class Baseline:
    """REV and what it covers: its commit, every commit reachable from it, and how many
    lines the log held there."""

    rev: str
    commit: str
    commits: frozenset[str]
    log_lines: int

    def covers(self, commit: str | None, path: str | None, line: int | None,
               log_rel: str) -> bool:
        """Whether a failure at (`commit`, `path`, `line`) predates REV."""
        if commit is not None:
            return commit in self.commits
        return line is not None and path == log_rel and line <= self.log_lines


def baseline(root: Path, rev: str, log_rel: str) -> Baseline:
    """The Baseline of revision `rev` in the repository at `root` (UsageError when `rev`
    names no commit)."""
    commit = git.resolve_commit(root, rev)
    if commit is None:
        raise UsageError(f"--since {rev}: not a commit of this repository")
    listed = git.run(root, "rev-list", commit, check=False)
    commits = frozenset(listed.stdout.decode("ascii", "replace").split())
    blob = git.run(root, "cat-file", "blob", f"{commit}:./{log_rel}", check=False)
    lines = blob.stdout.count(b"\n") if blob.returncode == 0 else 0
    return Baseline(rev, commit, commits, lines)


def grandfather(results: list[CheckResult], base: Baseline, log_rel: str) -> int:
    """Turn every failure that predates `base` into a note of its check; return how many
    were turned."""
    moved = 0
    for res in results:
        kept = []
        for failure in res.failures:
            if base.covers(failure.commit, failure.path, failure.line, log_rel):
                loc = failure.location()
                res.notes.append(f"before --since {base.rev} ({base.commit[:12]}): "
                                 + (f"{loc}: " if loc else "") + failure.message)
                moved += 1
            else:
                kept.append(failure)
        res.failures = kept
    return moved
