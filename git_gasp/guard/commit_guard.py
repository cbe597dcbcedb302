"""The pre-commit guard: staged append-only files may only grow, and what they gain
must be valid.

Compares the index (``GIT_INDEX_FILE`` when git sets it) with HEAD, and during a
merge (``MERGE_HEAD``) with every merged parent, for each append-only file of every
agent root in the work tree. A root is a directory holding ``AGENT.md`` or
``state/events.jsonl`` in HEAD or the index. Appended log lines are checked against
checks 1, 5 and 7 given the committed log before them. Only HEAD's, the parents'
and the index's blobs are read: never the history. The committed log is not even
parsed when its index is cached (``index_cache``, per blob id): the staged blob is
proved to extend it by hashing its first bytes (a blob id is their sha1), and only
the lines new events refer to are parsed.

Here: which paths are guarded and the one-parent, merge and check-1 rules. The
sides compared are read in ``staged``, checks 5 and 7 live in ``appended``, the
rule names, fixes and printed report in ``rejection``.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

from dulwich.repo import Repo

from git_gasp.conformance.rules import roundtrip_problem
from git_gasp.guard.appended import AppendedEvents
from git_gasp.guard.committed_log import CommittedLog, TooLarge
from git_gasp.guard.index_cache import CommittedLogCache
from git_gasp.guard.rejection import (
    CHECK1,
    DELETED_FIX,
    FIXES,
    MERGE_RULE,
    ONE_PARENT,
    Rejection,
)
from git_gasp.guard.staged import File, StagedSides, index_file
from git_gasp.protocol.appendonly import (
    LOG_PATH,
    extends_by_hash,
    extension_problem,
    is_append_only,
    merge_problem,
)
from git_gasp.protocol.envelope import EnvelopeError, Event, parse_line, split_lines
from git_gasp.store.gitrepo import open_repo


class _Guard(StagedSides):
    """One guard run: which staged paths are append-only, and what is wrong with them."""

    def __init__(self, repo: Repo, index_path: str,
                 cache: CommittedLogCache | None = None) -> None:
        super().__init__(repo, index_path)
        self.rejections: list[Rejection] = []
        self._declared: dict[bytes, frozenset[bytes]] = {}
        self.cache = cache
        # (blob id, committed log's index, appended events): indexed once the commit passes
        self.staged_logs: list[tuple[bytes, CommittedLog, list[Event]]] = []

    # ---- which paths are guarded

    def _present(self, path: bytes) -> bool:
        return path in self.index or path in self.head or any(path in p for p in self.parents)

    def _root_of(self, path: bytes) -> tuple[bytes, bytes] | None:
        """(agent root, path relative to it) if `path` is append-only, else None."""
        parts = path.split(b"/")
        for depth in range(len(parts) - 1, -1, -1):
            root = b"/".join(parts[:depth])
            join = (root + b"/") if root else b""
            if not (self._present(join + b"AGENT.md") or self._present(join + LOG_PATH)):
                continue
            rel = path[len(join):]
            if is_append_only(rel, self._declared_of(root)):
                return root, rel
        return None

    def _declared_of(self, root: bytes) -> frozenset[bytes]:
        """Every relocated log path a manifest of `root` declares: the index's, HEAD's
        and each merged parent's (unstaging or editing AGENT.md must not unguard the
        log HEAD's manifest relocated)."""
        if root not in self._declared:
            sides = [self.index, self.head, *self.parents]
            self._declared[root] = frozenset(
                filter(None, {self._log_location(root, side) for side in sides}))
        return self._declared[root]

    def _log_location(self, root: bytes, files: dict[bytes, File]) -> bytes | None:
        """The relocated log path the AGENT.md of `root` in `files` declares, if any."""
        entry = files.get((root + b"/" if root else b"") + b"AGENT.md")
        if entry is None or not stat.S_ISREG(entry[0]):
            return None
        data = self.blob(entry[1])
        if b"ocations" not in data:  # the fast path: no Locations, no YAML parse
            return None
        from git_gasp.protocol.manifest import ManifestError, parse_manifest

        try:
            log = parse_manifest(data).locations["log"].encode()
        except (ManifestError, UnicodeError):
            return None
        return None if log == LOG_PATH else log

    def guarded(self) -> Iterator[tuple[bytes, bytes, bytes]]:
        """(path, agent root, relative path) of every append-only path that changed."""
        candidates = set(self.conflicted)
        sides = [self.head, *self.parents]
        for side in sides:
            candidates.update(p for p, f in side.items() if self.index.get(p) != f)
        candidates.update(p for p, f in self.index.items() if self.head.get(p) != f)
        for path in sorted(candidates):
            found = self._root_of(path)
            if found is not None:
                yield path, *found

    # ---- the rules

    def reject(self, path: bytes, line: int | None, rule: str, message: str,
               fix: str | None = None) -> None:
        text = os.fsdecode(path)
        self.rejections.append(
            Rejection(text, line, rule, message, (fix or FIXES[rule]).format(path=text)))

    def check_path(self, path: bytes, root: bytes, rel: bytes) -> None:
        if path in self.conflicted:
            self.reject(path, None, ONE_PARENT, "the file is unmerged (conflict stages in the "
                        "index)", "resolve the conflict, then `git add` the file")
            return
        new = self.index.get(path)
        if new is not None and stat.S_ISLNK(new[0]):
            self.reject(path, None, ONE_PARENT, "append-only file is staged as a symlink (git "
                        "stores the link, not the content)", "commit the file itself")
            return
        old = self.head.get(path)
        if old is not None and not stat.S_ISREG(old[0]):
            old = None  # a symlink replaced by a file counts as added
        if new is None:
            if old is not None:
                self.reject(path, None, ONE_PARENT, "append-only file is deleted",
                            DELETED_FIX)
            return
        is_log = rel == LOG_PATH or rel in self._declared_of(root)
        base: bytes | None = b""
        known: CommittedLog | None = None
        if old is not None and old[1] != new[1]:
            known = self._cached(old[1], self.blob(new[1])) if is_log else None
            base = None if known is not None else self.blob(old[1])
            problem = None if base is None else extension_problem(base, self.blob(new[1]))
            if problem is not None:
                self.reject(path, problem[0], ONE_PARENT, problem[1])
                return
        for parent_files in self.parents:
            theirs = parent_files.get(path)
            if theirs is None or not stat.S_ISREG(theirs[0]) or theirs[1] == new[1]:
                continue
            problem = merge_problem(self.blob(theirs[1]), self.blob(new[1]))
            if problem is not None:
                self.reject(path, problem[0], MERGE_RULE,
                            f"the merge loses lines of {theirs[1].decode()[:12]}: {problem[1]}")
        if old is not None and old[1] == new[1]:
            return
        if is_log:
            data = self.blob(new[1])
            if known is None:
                assert base is not None
                known = self._indexed(old[1] if old is not None else None, base, data)
            self.check_appended(path, known, data, new[1])

    # ---- the committed log's index (cached per blob id)

    def _cached(self, old_sha: bytes, new: bytes) -> CommittedLog | None:
        """HEAD's log index from the cache, if `new` provably extends that blob (then
        the blob itself is never read)."""
        if self.cache is None:
            return None
        length = self.cache.header(old_sha)
        if length is None or not extends_by_hash(old_sha, length, new):
            return None
        return self.cache.load(old_sha, new)

    def _indexed(self, old_sha: bytes | None, base: bytes, new: bytes) -> CommittedLog:
        """The index of the committed log `base` (blob `old_sha`), which `new` extends:
        grown from a cached older version of it when there is one, then cached."""
        if old_sha is None or not base:
            return CommittedLog.empty(new)
        known = None
        if self.cache is not None:
            for sha, length in self.cache.ancestors():
                if length <= len(base) and extends_by_hash(sha, length, base):
                    known = self.cache.load(sha, base)
                    if known is not None:
                        break
        try:
            known = (known or CommittedLog.empty(base)).extended(base)
        except TooLarge:
            return CommittedLog.build(new, len(base))  # not cacheable: index it in place
        if self.cache is not None:
            self.cache.save(old_sha, known)
        return CommittedLog(new, known.length, known.line_count, known.keys, known.offsets)

    def check_appended(self, path: bytes, old: CommittedLog, new: bytes, new_sha: bytes) -> None:
        """Checks 1, 5 and 7 for the lines `new` adds after the committed log `old`
        (whose bytes `new` starts with)."""
        length = old.length
        tail = new[length:]
        if length and new[length - 1] != 0x0A:
            tail = tail[1:]  # the newline that completes the old last line
        lines, terminated = split_lines(tail)
        events: list[Event] = []
        self.staged_logs.append((new_sha, old, events))  # filled below
        if not lines:
            return
        offset = old.line_count
        for number, raw in enumerate(lines, offset + 1):
            if number == offset + len(lines) and not terminated:
                self.reject(path, number, CHECK1, "the last line has no terminating newline "
                            "(a torn write?)", "end the line with a newline, or remove the "
                            "partial line, then `git add` the file again")
                continue
            try:
                event = parse_line(raw, number)
            except EnvelopeError as exc:
                self.reject(path, number, CHECK1, str(exc))
                continue
            except RecursionError:
                self.reject(path, number, CHECK1, "JSON nested too deeply")
                continue
            problem = roundtrip_problem(event)
            if problem:
                self.reject(path, number, CHECK1, problem)
                continue
            events.append(event)
        if events:
            AppendedEvents(self.reject, path, old, events).check()

    def save_staged(self) -> None:
        """Cache the index of each staged log (the next commit's HEAD version)."""
        if self.cache is None:
            return
        for sha, old, events in self.staged_logs:
            try:  # the appended lines passed check 1: reuse their events, no second parse
                self.cache.save(sha, old.extended(old.data, events=events))
            except TooLarge:
                pass


def run_guard(cwd: Path, *, cache: bool = True) -> list[Rejection]:
    """Every reason the staged commit must be refused (empty: allow it).

    The merged parents are MERGE_HEAD's, or while `git merge` runs its hooks (no
    MERGE_HEAD yet), those named by its GITHEAD_<id> variables. `cache`: reuse and
    store the committed logs' indexes under the git dir."""
    repo, _prefix = open_repo(cwd)
    with repo:
        facts = CommittedLogCache(repo.commondir()) if cache else None
        try:
            guard = _Guard(repo, index_file(repo), cache=facts)
        except FileNotFoundError:
            return []  # no index yet: nothing is staged
        for path, root, rel in guard.guarded():
            guard.check_path(path, root, rel)
        if not guard.rejections:
            guard.save_staged()
        return guard.rejections


