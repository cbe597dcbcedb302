"""The pre-commit guard: staged append-only files may only grow, and what they gain
must be valid.

Compares the index (``GIT_INDEX_FILE`` when git sets it) with HEAD, and during a
merge (``MERGE_HEAD``) with HEAD and every merged parent together (the merge rule by
meaning, ``merge_result_problem``), for each append-only file of every agent root in
the work tree. Each side's append-only paths come from its own AGENT.md: a staged
manifest that moves the log (or facts, journal) must find the moved file starting
with the old one's bytes. A root is a directory holding ``AGENT.md`` or
``state/events.jsonl`` in HEAD or the index. Appended log lines are checked against
checks 1, 5 and 7 given the committed log before them. Only the paths the commit
changes are looked at (``staged``: git names them), and only HEAD's, the parents'
and the index's blobs of those paths are read: never the rest of the tree, never the
history. The committed log is not even parsed when its index is cached
(``committed_log_cache``, per blob id): the staged blob is proved to extend it by hashing its
first bytes (a blob id is their sha1), and only the lines new events refer to are
parsed. Each extension proved for a commit that passes is recorded for check 4
(``conformance.proven``).

Here: which paths are guarded and the one-parent, merge and check-1 rules. The
sides compared are read in ``staged``, checks 5 and 7 live in ``appended``, the
rule names, fixes and printed report in ``rejection``; the repository is found by
``gitdirs`` (no object-store library on the hook's path), and the hook begins the diff and the log's
hashing before this module loads (``warm``).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from git_gasp.conformance.history.proven import record_extensions
from git_gasp.conformance.rules import roundtrip_problem
from git_gasp.guard.appended import AppendedEvents
from git_gasp.guard.committed_log import CommittedLog, TooLarge
from git_gasp.guard.committed_log_cache import CommittedLogCache
from git_gasp.guard.identity_rule import (
    IDENTITY_FIX,
    IDENTITY_RULE,
    identity_dir,
    identity_problem,
    staged_under,
    touches_identity,
)
from git_gasp.guard.rejection import (
    CHECK1,
    DELETED_FIX,
    FIXES,
    LOCAL_ONLY,
    MERGE_RULE,
    ONE_PARENT,
    Rejection,
)
from git_gasp.guard.secrets_rule import check_secrets
from git_gasp.guard.staged import File, StagedSides, index_file
from git_gasp.guard.warm import Warm
from git_gasp.odb.blobid import extends_by_hash
from git_gasp.odb.gitdirs import GitDirs, locate
from git_gasp.odb.repo import open_repo
from git_gasp.protocol.appendonly import (
    LOG_PATH,
    AppendOnlyPaths,
    extension_problem,
    merge_result_problem,
    shared_line_prefix_len,
)
from git_gasp.protocol.envelope import EnvelopeError, Event, parse_line, split_lines
from git_gasp.protocol.manifest import LOCAL_ONLY as LOCAL_ONLY_NAMES
from git_gasp.protocol.manifest import ManifestError, manifest_paths


class _Guard(StagedSides):
    """One guard run: which staged paths are append-only, and what is wrong with them."""

    def __init__(self, repo: GitDirs, index_path: str,
                 cache: CommittedLogCache | None = None, warm: Warm | None = None) -> None:
        super().__init__(repo, index_path, warm)
        self._init_rules(cache)

    @classmethod
    def from_sides(cls, repo: GitDirs | None, index: dict[bytes, File], head: dict[bytes, File],
                   parents: list[dict[bytes, File]], *, blobs: dict[bytes, bytes] | None = None,
                   cache: CommittedLogCache | None = None) -> _Guard:
        """A guard over sides given as path -> (mode, blob id) instead of an index file:
        a tree the runtime commits itself, or (with no repo) blobs held in `blobs`."""
        guard = cls.__new__(cls)
        guard._setup(repo, dict(index), head, parents, set(), None)
        guard._blobs.update(blobs or {})
        guard._init_rules(cache)
        return guard

    def _init_rules(self, cache: CommittedLogCache | None) -> None:
        self.rejections: list[Rejection] = []
        self._paths: dict[tuple[bytes, bytes | None], AppendOnlyPaths] = {}
        self.cache = cache
        # (blob id, committed log's index, appended events): indexed once the commit passes
        self.staged_logs: list[tuple[bytes, CommittedLog, list[Event]]] = []
        # (parent's blob id, its length, staged blob id): extensions proved by content or
        # hash, recorded for check 4 once the commit passes
        self.proofs: list[tuple[bytes, int, bytes]] = []
        # path -> (first line, bytes) a log gains, cut once for the secret rule
        self.added: dict[bytes, tuple[int, bytes]] = {}

    # ---- which paths are guarded

    def _present(self, path: bytes) -> bool:
        return path in self.index or path in self.head or any(path in p for p in self.parents)

    def _is_root(self, root: bytes) -> bool:
        join = (root + b"/") if root else b""
        return self._present(join + b"AGENT.md") or self._present(join + LOG_PATH)

    def _root_of(self, path: bytes) -> tuple[bytes, bytes] | None:
        """(agent root, path relative to it) if `path` is append-only, else None."""
        parts = path.split(b"/")
        for depth in range(len(parts) - 1, -1, -1):
            root = b"/".join(parts[:depth])
            if not self._is_root(root):
                continue
            rel = path[len(root) + 1 if root else 0:]
            if any(rel in paths for paths in self._sides_paths(root)):
                return root, rel
        return None

    def _sides_paths(self, root: bytes) -> list[AppendOnlyPaths]:
        """The append-only paths of `root` in the index, then HEAD, then each parent."""
        return [self.paths_of(root, side) for side in (self.index, self.head, *self.parents)]

    def paths_of(self, root: bytes, files: dict[bytes, File]) -> AppendOnlyPaths:
        """The append-only paths the AGENT.md of `root` in `files` declares."""
        entry = files.get((root + b"/" if root else b"") + b"AGENT.md")
        key = (root, entry[1] if entry is not None and stat.S_ISREG(entry[0]) else None)
        found = self._paths.get(key)
        if found is None:
            if key[1] is not None and self.worktree is not None:
                self._worktree_at.setdefault(key[1], (root + b"/" if root else b"") + b"AGENT.md")
            found = manifest_paths(self.blob(key[1]) if key[1] is not None else None)
            self._paths[key] = found
        return found

    def guarded(self) -> dict[bytes, set[bytes]]:
        """Agent root -> the append-only paths (relative to it) that changed; a root
        whose AGENT.md changed is listed too (it may move an append-only file)."""
        candidates = self.changed_paths()
        self.prefetch(_markers(candidates))  # one lookup per side for every root's markers
        roots: dict[bytes, set[bytes]] = {}
        for path in sorted(candidates):
            if path == b"AGENT.md" or path.endswith(b"/AGENT.md"):
                roots.setdefault(path[:-len(b"/AGENT.md")] if b"/" in path else b"", set())
                continue
            found = self._root_of(path)
            if found is not None:
                roots.setdefault(found[0], set()).add(found[1])
        return roots

    def check_identity(self) -> None:
        """Check 6's identity rule (`identity_rule`) for every agent root whose AGENT.md
        or identity files the commit changes (after `guarded`, which looked up every
        root's AGENT.md)."""
        changed = self.changed_paths()
        roots = {b"/".join(path.split(b"/")[:depth]) for path in changed
                 for depth in range(path.count(b"/") + 1)}
        for root in sorted(roots):
            join = root + b"/" if root else b""
            entry = self.index.get(join + b"AGENT.md")
            if entry is None or not stat.S_ISREG(entry[0]):
                continue
            try:
                ident = identity_dir(self.blob(entry[1])).rstrip(b"/")
            except ManifestError:
                ident = b"identity"  # identity_problem names the parse error
            if not touches_identity(root, changed, ident):
                continue
            files = {join + b"AGENT.md": entry, **staged_under(self.index, join + ident + b"/")}
            problem = identity_problem(root, files, self.blob)
            if problem is not None:
                self.reject(join + b"AGENT.md", None, IDENTITY_RULE, problem, IDENTITY_FIX)

    def check_local_only(self) -> None:
        """Refuse staging an agent root's ``.agent/lease`` or ``.agent/HEAD`` (after
        `guarded`, which looked up every root's markers): local-only, never committed."""
        for path in sorted(self.changed_paths()):
            head, _, name = path.rpartition(b"/")
            if name not in LOCAL_ONLY_NAMES or path not in self.index \
                    or not (head == b".agent" or head.endswith(b"/.agent")):
                continue
            if self._is_root(head[:-len(b"/.agent")] if b"/" in head else b""):
                self.reject(path, None, LOCAL_ONLY, "local-only file is staged: "
                            f"{os.fsdecode(path)} is this machine's coordination state, "
                            "meaningless in a clone")

    # ---- the rules

    def reject(self, path: bytes, line: int | None, rule: str, message: str,
               fix: str | None = None) -> None:
        text = os.fsdecode(path)
        self.rejections.append(
            Rejection(text, line, rule, message, (fix or FIXES[rule]).format(path=text)))

    def check_root(self, root: bytes, changed: set[bytes]) -> None:
        """Every rule for the append-only files of the agent root `root`."""
        join = root + b"/" if root else b""
        child = self.paths_of(root, self.index)
        sides = [self.head, *self.parents]  # the commit's parents (HEAD: none when unborn)
        sides_paths = [self.paths_of(root, side) for side in sides]
        targets: dict[bytes, None] = {}
        sources: list[dict[bytes, tuple[str, bytes]]] = []  # per side: target -> (role, its path)
        for files, paths in zip(sides, sides_paths, strict=True):
            moves = paths.moves(child)
            source: dict[bytes, tuple[str, bytes]] = {}
            for rel in changed:
                if (rel in paths and rel not in moves) or rel in child:
                    targets[rel] = None
            for old, (role, new) in moves.items():
                if not _regular(files.get(join + old)):
                    continue
                if join + new not in self.index and join + old in self.index:
                    targets[old] = None  # it stayed where it was: it must still only grow
                    continue
                source[new] = (role, old)
                targets[new] = None
            sources.append(source)
        for rel in sorted(targets):
            versions = []  # (side's files, its path, its file, the role it moved)
            for files, paths, source in zip(sides, sides_paths, sources, strict=True):
                role, old = source.get(rel, (None, rel))
                if old in paths and _regular(files.get(join + old)):
                    versions.append((join + old, files[join + old], role))
            self.check_path(join + rel, rel == child.log, versions)

    def check_path(self, path: bytes, is_log: bool,
                   versions: list[tuple[bytes, File, str | None]]) -> None:
        """The staged `path` against each parent's version (path, file, moved role)."""
        if path in self.conflicted:
            self.reject(path, None, ONE_PARENT, "the file is unmerged (conflict stages in the "
                        "index)", "resolve the conflict, then `git add` the file")
            return
        new = self.index.get(path)
        if new is not None and not stat.S_ISREG(new[0]):
            what = "a symlink (git stores the link" if stat.S_ISLNK(new[0]) else \
                "a submodule (git stores a commit id"
            self.reject(path, None, ONE_PARENT, f"append-only file is staged as {what}, not "
                        "the content)", "commit the file itself")
            return
        if new is None:
            for old_path, _file, role in versions:
                moved = "" if role is None else (
                    f" (the manifest moves the {role} to {os.fsdecode(path)}, which is not "
                    "staged: its history would be dropped)")
                if self.parents:
                    self.reject(old_path, None, MERGE_RULE, "append-only file of a merged "
                                f"parent is missing from the merge result{moved}")
                else:
                    self.reject(old_path, None, ONE_PARENT, f"append-only file is deleted{moved}",
                                DELETED_FIX)
            return
        if all(file[1] == new[1] for _path, file, _role in versions) and versions:
            return  # unchanged (against every parent)
        if not self.parents:
            self._one_parent(path, is_log, versions[0] if versions else None, new)
        else:
            self._merge(path, is_log, versions, new)

    def _one_parent(self, path: bytes, is_log: bool,
                    version: tuple[bytes, File, str | None] | None, new: File) -> None:
        base: bytes | None = b""
        known: CommittedLog | None = None
        old = version[1] if version is not None else None
        if old is not None:
            known = self._cached(old[1], new[1]) if is_log else None
            base = None if known is not None else self.blob(old[1])
            problem = None if base is None else extension_problem(base, self.blob(new[1]))
            if problem is not None:
                assert version is not None
                moved = "" if version[2] is None else (
                    f" (the manifest moves the {version[2]} from {os.fsdecode(version[0])}: "
                    "the new file must start with the old one's bytes)")
                self.reject(path, problem[0], ONE_PARENT, problem[1] + moved)
                return
            length = known.length if known is not None else len(base or b"")
            self.proofs.append((old[1], length, new[1]))
        if is_log:
            data = self.blob(new[1])
            if known is None:
                assert base is not None
                known = self._indexed(old[1] if old is not None else None, base, data)
            self.check_appended(path, known, data, new[1])

    def _merge(self, path: bytes, is_log: bool,
               versions: list[tuple[bytes, File, str | None]], new: File) -> None:
        data = self.blob(new[1])
        blobs = [self.blob(file[1]) for _path, file, _role in versions]
        if blobs:
            problem = merge_result_problem(blobs, data)
            if problem is not None:
                index, line, reason = problem
                old_path, file, _role = versions[index]
                where = "" if old_path == path else f" ({os.fsdecode(old_path)})"
                self.reject(path, line, MERGE_RULE,
                            f"the merge loses lines of {file[1].decode()[:12]}{where}: {reason}")
                return
        # The parents the result extends by the one-parent rule (it starts with their
        # bytes): proved by content. For the log, the lines new to the merge are those
        # after the longest of them (the driver's base + ours + theirs extends ours; a
        # criss-cross resolved to the other side's order is that side's bytes), else
        # after the parents' shared lines.
        best: tuple[bytes, bytes] | None = None
        for (_path, file, _role), blob in zip(versions, blobs, strict=True):
            if extension_problem(blob, data) is None:
                if file[1] != new[1]:
                    self.proofs.append((file[1], len(blob), new[1]))
                if best is None or len(blob) > len(best[1]):
                    best = (file[1], blob)
        if not is_log:
            return
        if best is not None:
            known = self._indexed(best[0], best[1], data)
        else:
            known = CommittedLog.build(data, shared_line_prefix_len(blobs) if blobs else 0)
        self.check_appended(path, known, data, new[1])

    # ---- the committed log's index (cached per blob id)

    def _cached(self, old_sha: bytes, new_sha: bytes) -> CommittedLog | None:
        """HEAD's log index from the cache, if the staged blob `new_sha` provably
        extends that blob (then the blob itself is never read)."""
        if self.cache is None:
            return None
        length = self.cache.header(old_sha)
        if length is None or not self._extends_by_hash(old_sha, length, new_sha):
            return None
        return self.cache.load(old_sha, self.blob(new_sha))

    def _extends_by_hash(self, old_sha: bytes, length: int, new_sha: bytes) -> bool:
        """True if blob `new_sha` provably extends blob `old_sha` of `length` bytes
        (`extends_by_hash`, its first bytes hashed beside the work-tree read's check)."""
        new = self.blob(new_sha, prefix=length)
        if len(old_sha) != 40 or len(new) < length or self.prefix_id(new_sha, length) != old_sha:
            return False
        # The prefix is the old blob: the one-parent rule is left to its last byte and
        # the byte after it (an unterminated last line must not be extended).
        edge = max(length - 1, 0)
        return extension_problem(new[edge:length], new[edge:length + 1]) is None

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
        self.added[path] = (old.line_count + 1, tail)
        events: list[Event] = []
        self.staged_logs.append((new_sha, old, events))  # filled below
        if not lines:
            return
        offset = old.line_count
        for number, raw in enumerate(lines, offset + 1):
            if number == offset + len(lines) and not terminated:
                try:  # a complete event only lacks its newline: never advise removing it
                    parse_line(raw, number)
                    why, fix = ("the last line is a complete event with no terminating "
                                "newline", "append the newline, then `git add` the file again")
                except (EnvelopeError, RecursionError):
                    why, fix = ("the last line has no terminating newline and does not parse "
                                "(a torn write?)", "remove the partial (uncommitted) line, then "
                                "`git add` the file again")
                self.reject(path, number, CHECK1, why, fix)
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
        """Record the extensions proved for check 4 and cache the index of each staged
        log (the next commit's HEAD version). Call only when the commit passes."""
        if self.repo is not None and self.proofs:
            record_extensions(self.repo.commondir(), self.proofs)
        if self.cache is None:
            return
        for sha, old, events in self.staged_logs:
            try:  # the appended lines passed check 1: reuse their events, no second parse
                self.cache.save(sha, old.extended(old.data, events=events))
            except TooLarge:
                pass


def _markers(paths: set[bytes]) -> set[bytes]:
    """The AGENT.md and log paths of every directory above `paths` (what `_is_root`
    and `paths_of` look up)."""
    found: set[bytes] = set()
    for path in paths:
        parts = path.split(b"/")
        for depth in range(len(parts)):
            join = b"/".join(parts[:depth]) + b"/" if depth else b""
            found.add(join + b"AGENT.md")
            found.add(join + LOG_PATH)
    return found


def _regular(file: File | None) -> bool:
    return file is not None and stat.S_ISREG(file[0])


def check_files(index: dict[bytes, File], head: dict[bytes, File],
                parents: list[dict[bytes, File]], blobs: dict[bytes, bytes]) -> list[Rejection]:
    """The guard's rules over sides given as path -> (mode, blob id) with every blob's
    bytes in `blobs`: no repository, no cache (what `run_guard` decides for a commit
    whose index is `index`, HEAD `head` and merged heads `parents`)."""
    guard = _Guard.from_sides(None, index, head, parents, blobs=blobs)
    for root, changed in guard.guarded().items():
        guard.check_root(root, changed)
    guard.check_identity()
    guard.check_local_only()
    check_secrets(guard)
    return guard.rejections


def run_guard(cwd: Path | str, *, cache: bool = True, warm: Warm | None = None
              ) -> list[Rejection]:
    """Every reason the staged commit must be refused (empty: allow it).

    The merged parents are MERGE_HEAD's, or while `git merge` runs its hooks (no
    MERGE_HEAD yet), those named by its GITHEAD_<id> variables. `cache`: reuse and
    store the committed logs' indexes under the git dir. `warm`: the work the hook
    began before the guard loaded (`warm.Warm`), for the repository around `cwd`."""
    repo = warm.repo if warm is not None else locate(os.fspath(cwd))
    if repo is None:  # an unusual layout: odb.repo finds it (or says why not)
        repo = open_repo(cwd)[0]
    with repo:
        facts = CommittedLogCache(repo.commondir()) if cache else None
        try:
            guard = _Guard(repo, index_file(repo), cache=facts, warm=warm)
        except FileNotFoundError:
            return []  # no index yet: nothing is staged
        for root, changed in guard.guarded().items():
            guard.check_root(root, changed)
        guard.check_identity()
        guard.check_local_only()
        check_secrets(guard)
        if not guard.rejections:
            guard.save_staged()
        return guard.rejections


