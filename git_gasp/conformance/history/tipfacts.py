"""What check 4 proved about the log at the tip, handed to the other checks: HEAD's log
blob, how the working file relates to it, and the older log blobs it provably starts
with (``worktree`` fills it in; ``logcheck`` trusts a saved log state by it).
No git access here: the facts are plain data."""

from __future__ import annotations

from collections.abc import Callable

from git_gasp.base.record import Record

SAME, EXTENDS = "same", "extends"  # how the working file relates to HEAD's blob


class TipFacts(Record):
    """What check 4 proved about the log at the tip, for the other checks.

    `head_log`: HEAD's log blob id (None when the log is not a file in HEAD), of
    `head_length` bytes when known; `worktree`: SAME when the working file is that blob
    (git's stat test or its sha1), EXTENDS when it starts with its bytes, None when
    check 4 could not show either; `chain`: HEAD's log blob, then the log blobs of the
    one-parent ancestors walked this run (and the first one verified before), each a
    byte prefix of the one before it, as check 4 verified; `proven`: further (old, new)
    blob id pairs known to satisfy the one-parent rule (``Walker.proven``, if the walker
    keeps one).
    """

    FIELDS = ("common_dir", "prefix", "log_path", "head_log", "head_length", "worktree",
              "chain", "proven")

    def __init__(self, common_dir: str, prefix: bytes, log_path: bytes,
                 head_log: bytes | None = None, head_length: int | None = None,
                 worktree: str | None = None, chain: list[bytes] | None = None,
                 proven: set[tuple[bytes, bytes]] | None = None) -> None:
        self.common_dir, self.prefix, self.log_path = common_dir, prefix, log_path
        self.head_log, self.head_length, self.worktree = head_log, head_length, worktree
        self.chain = [] if chain is None else chain
        self.proven = set() if proven is None else proven

    def starts_with(self, blob_id: bytes) -> bool:
        """True when the working log file provably starts with the bytes of `blob_id`."""
        if self.worktree is None or not self.chain:
            return False
        if blob_id in self.chain:
            return True
        targets = set(self.chain)
        seen, todo = {blob_id}, [blob_id]
        while todo:  # blob_id -> ... -> a chain blob, over proven pairs
            old = todo.pop()
            for a, b in self.proven:
                if a == old and b not in seen:
                    if b in targets:
                        return True
                    seen.add(b)
                    todo.append(b)
        return False


class PendingTip(Record):
    """Check 4's `TipFacts` while its walk still runs (in a child process): where the
    saved log states live (`common_dir`, `prefix`, as the walk will report them) now,
    the facts themselves from `wait` (None when the walk could not establish them)."""

    FIELDS = ("common_dir", "prefix", "wait")

    def __init__(self, common_dir: str, prefix: bytes,
                 wait: Callable[[], TipFacts | None]) -> None:
        self.common_dir, self.prefix, self.wait = common_dir, prefix, wait
