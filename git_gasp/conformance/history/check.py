"""Check 4 (append-only-in-git) over the whole commit DAG, with a local cache.

Every commit reachable from HEAD is compared with each of its parents, parents
first (``walk``, over ``odb.objects``); verified commits are remembered
under the git dir (``cache``), so a later run stops at them and only walks
new commits; HEAD's log must be committed and the working tree must extend HEAD
(``worktree``). On a packed repository most one-parent appends are proven
from the pack deltas without building the versions (``prover``). `check_store`
runs the commit rules alone over any object store, an in-memory one included.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from git_gasp.conformance.history.cache import VerifiedCache
from git_gasp.conformance.history.proven import load_extensions
from git_gasp.conformance.history.prover import PackProver
from git_gasp.conformance.history.result import HistoryResult
from git_gasp.conformance.history.walk import Progress, Walker
from git_gasp.conformance.history.worktree import WorkTree
from git_gasp.odb.gitdirs import GitDirs
from git_gasp.odb.objects import PACKED_RECENT_BYTES
from git_gasp.odb.packs import PackFiles
from git_gasp.odb.repo import (
    UnsupportedObjectFormat,
    open_repo,
    require_sha1,
    shallow_commits,
)
from git_gasp.protocol.appendonly import LOG_PATH
from git_gasp.protocol.failure import Failure

if TYPE_CHECKING:  # dulwich's types: dulwich loads only where objects are read
    from git_gasp.odb.repo import BaseObjectStore

_LENGTHS_KEPT = 64  # blob lengths the cache keeps: HEAD's, then earlier tips'

__all__ = ["HistoryResult", "Progress", "check_history", "check_store"]


def _wanted(declared: Iterable[bytes], log_path: bytes) -> frozenset[bytes]:
    """The declared append-only paths, normalised, plus a relocated log."""
    wanted = frozenset(os.fsencode(p).replace(b"\\", b"/").strip(b"/") for p in declared)
    return wanted | {log_path} if log_path != LOG_PATH else wanted


def check_store(
    store: BaseObjectStore, head: bytes, *, prefix: bytes = b"",
    declared: Iterable[bytes] = (), log_path: bytes = LOG_PATH,
    shallow: Iterable[bytes] = (), use_packs: bool = True,
) -> HistoryResult:
    """Check 4's commit rules over every commit reachable from `head` in `store`.

    `prefix` is the agent root inside the trees (``b""``: the top); `declared` and
    `log_path` as for `check_history`; `shallow` the shallow-boundary commits. No
    work tree, no cache, and no "the log is committed in HEAD" check: those belong
    to `check_history`. A missing or unreadable object is a failure (fail closed).
    `use_packs=False` decides every pair from content (the verdicts are the same).
    """
    walker = Walker(store, prefix, _wanted(declared, log_path), log_path)
    files = None
    try:
        files = _use_packs(walker, store, use_packs)
        if not _refused(walker):
            walker.walk(head, set(shallow))
    except Exception as exc:  # fail closed, never crash
        walker.fail(f"history walk failed: {type(exc).__name__}: {exc}")
    finally:
        if files is not None:
            files.close()
    return walker.result


_REFUSED = "pack index refused"


def _refused(walker: Walker) -> bool:
    """True when a pack index is refused: the history is not walked, since the store's
    reader would read that index unchecked (or wait on it, a FIFO) for any object not
    found elsewhere; the failure naming the index is the verdict."""
    if not any(f.message.startswith(_REFUSED) for f in walker.result.failures):
        return False
    walker.result.notes.append("history not walked: a pack index is refused (above)")
    return True


def _use_packs(walker: Walker, store: BaseObjectStore, prove: bool) -> PackFiles | None:
    """Let the walk read trees, commits and blobs from the store's packs (`odb.packs`),
    and (`prove`) prove appends from their deltas; a store not on disk is read through
    itself. A pack index git refuses fails the check, naming it."""
    files = PackFiles.for_store(store)
    for path, why in files.refused if files is not None else ():
        walker.result.failures.append(Failure(f"{_REFUSED}: {why}", path=path))
    if files is not None:
        walker.objects.packed = files
        if files.packs:
            walker.objects.recent_budget = PACKED_RECENT_BYTES
        if prove:
            walker.prover = PackProver(files)
    return files


def check_history(
    agent_root: str | os.PathLike, *, declared: Iterable[bytes] = (), use_cache: bool = True,
    log_path: bytes = LOG_PATH, progress: Progress | None = None, use_packs: bool = True,
) -> HistoryResult:
    """Run check 4 on the repository around `agent_root`.

    Each commit's append-only paths come from its own AGENT.md; `declared` adds
    paths relative to the agent root to every commit's; `log_path` is where the
    working tree's manifest puts the event log (it is append-only in every commit
    and must be committed in HEAD). `progress` is called as (commits walked, commits
    to walk) at most a few times a second during a walk; it prints nothing itself.
    `use_packs=False` decides every pair from content (the verdicts are the same).
    Raises NotAGitRepo when `agent_root` is not in a git work tree; every other
    problem is reported as a failure.
    """
    agent_root = str(Path(agent_root))  # as pathlib shows it (in NotAGitRepo)
    repo, prefix = open_repo(agent_root)
    files = None
    try:
        worktree = WorkTree(repo, agent_root, prefix)
        walker = Walker(repo.object_store, prefix, _wanted(declared, log_path), log_path,
                        worktree, progress)
        try:
            require_sha1(repo)
        except UnsupportedObjectFormat as exc:
            walker.fail(str(exc))
            return walker.result
        try:
            files = _use_packs(walker, repo.object_store, use_packs)
            if not _refused(walker):
                _run(repo, walker, worktree, use_cache)
        except Exception as exc:  # fail closed, never crash
            walker.fail(f"history walk failed: {type(exc).__name__}: {exc}")
        return walker.result
    finally:
        if files is not None:
            files.close()
        repo.close()


def _run(repo: GitDirs, walker: Walker, worktree: WorkTree, use_cache: bool) -> None:
    head = repo.head_commit()
    if head is None:
        walker.fail("no commits yet: the log is not committed")
        return
    cache = VerifiedCache(repo.commondir(), walker.prefix, walker.declared) if use_cache \
        else None
    if cache is not None:
        cache.load()
        if cache.problem:
            walker.result.notes.append(cache.problem)
        walker.cached = cache.commits
        walker.objects.lengths.update(cache.lengths)
        walker.objects.memo.update(cache.tip_objects)  # the last verified tip's, hash-checked
        # Pairs the commit guard proved when it accepted a commit (same trust as the
        # verified-commit cache: both are facts about immutable blob ids).
        walker.proven |= load_extensions(repo.commondir())
    walker.note_head_blobs(head)
    verified = walker.walk(head, shallow_commits(repo))
    tip_lengths = worktree.check_head(walker, head)
    result = walker.result
    tip_objects = None
    if head in verified:  # HEAD's objects, then the earlier tips' as the cache allows
        tip_objects = dict(walker.head_objects)
        for sha, got in cache.tip_objects.items() if cache is not None else ():
            tip_objects.setdefault(sha, got)
    if cache is not None and (verified or (tip_lengths
                                           and tip_lengths.items() - cache.lengths.items())):
        # Lengths are only hints: a wrong one fails the hash check and falls back. The
        # earlier tips' are kept after HEAD's (a commit on one after a reset needs it).
        lengths = dict(tip_lengths or cache.lengths)
        for sha, length in cache.lengths.items():
            if len(lengths) >= _LENGTHS_KEPT:
                break
            lengths.setdefault(sha, length)
        problem = cache.save(cache.commits | verified, lengths,
                             tip_objects)
        if problem:
            result.notes.append(problem)
