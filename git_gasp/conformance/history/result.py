"""What check 4 reports: the failures and notes of the walk (`HistoryResult`), how it
decided its pairs (`WalkStats`), and the hint its append-only failures end with."""

from __future__ import annotations

from git_gasp.base.record import Record
from git_gasp.conformance.history.tipfacts import TipFacts
from git_gasp.protocol.failure import Failure

APPEND_HINT = ("append-only files may only grow at the end: rewrite or drop this commit "
               "and re-append its events as new lines (a revert does not help: the commit "
               "stays in the history)")
WORKTREE_HINT = ("append-only files may only grow at the end: put the committed lines "
                 "back (git restore -- PATH) and append a correcting event instead")


class WalkStats(Record):
    """How the walk decided its pairs (not part of the verdict, nor of equality):
    `proven_known` pairs found in `Walker.proven`, `proven_packs` proved from pack
    deltas (merge parents too), `read` one-parent pairs decided by comparing content,
    `merges_proven` merged files proven without reading content (`merge_tails` of them
    by a parent's own lines ending the result), `merges_read` compared by content."""

    FIELDS = ("proven_known", "proven_packs", "read", "merges_proven", "merge_tails",
              "merges_read")

    def __init__(self, proven_known: int = 0, proven_packs: int = 0, read: int = 0,
                 merges_proven: int = 0, merge_tails: int = 0, merges_read: int = 0) -> None:
        self.proven_known, self.proven_packs, self.read = proven_known, proven_packs, read
        self.merges_proven, self.merge_tails = merges_proven, merge_tails
        self.merges_read = merges_read


class HistoryResult(Record):
    """What check 4 found in the git history and the working tree. `commits_cached`:
    verified commits known from the cache when the walk stopped at one (0 otherwise):
    the ancestors skipped, give or take cached commits of other branches. Not compared
    or shown: `stats`, and `tip`, what the working-tree side proved about HEAD's log
    (`worktree`), which the log checks use to trust their saved state without
    hashing the log."""

    FIELDS = ("failures", "notes", "commits_walked", "commits_cached")

    def __init__(self, failures: list[Failure] | None = None, notes: list[str] | None = None,
                 commits_walked: int = 0, commits_cached: int = 0,
                 stats: WalkStats | None = None, tip: TipFacts | None = None) -> None:
        self.failures = [] if failures is None else failures
        self.notes = [] if notes is None else notes
        self.commits_walked, self.commits_cached = commits_walked, commits_cached
        self.stats = WalkStats() if stats is None else stats
        self.tip = tip
