"""Check 4's side of the working tree: HEAD's append-only files on disk must extend
the committed blobs, and a big file holding HEAD's blob is read from disk rather than
inflated from the object store (git's own stat test, or the blob's sha1, proves it is
that blob).

What check 4 proved about the log on the way is handed to the other checks as a
`TipFacts` (``result.tip``): HEAD's log blob, how the working file relates to it, and
the older log blobs it provably starts with — so a cached re-check of checks 1-3, 5-7
trusts its saved state of an older log version without reading the file.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from git_gasp.base.fileops import open_regular
from git_gasp.base.files import open_file
from git_gasp.conformance.history.result import WORKTREE_HINT
from git_gasp.conformance.history.tipfacts import EXTENDS, SAME, TipFacts
from git_gasp.conformance.history.walk import Walker
from git_gasp.odb.blobid import blob_hasher, blob_id, extends_by_hash
from git_gasp.odb.indexstat import index_entry_stat, stat_proves
from git_gasp.odb.objects import CommitInfo, Entry, ObjectError, TreeError
from git_gasp.protocol.appendonly import extension_problem

if TYPE_CHECKING:  # dulwich's types: dulwich loads only where objects are read
    from git_gasp.odb.gitdirs import GitDirs

_WORKTREE_READ_MIN = 1 << 16  # below this, inflating the object is as cheap as reading
_HASH_PIECE = 1 << 22  # a file hashed in pieces: no buffer of its size (page faults)

class WorkTree:
    """The agent root's files (`agent_root`, at `prefix` in the repository `repo`)."""

    def __init__(self, repo: GitDirs, agent_root: str, prefix: bytes) -> None:
        self.repo = repo
        self.agent_root = agent_root
        self.prefix = prefix
        self._stat_index: StatIndex | None = None

    def head_blob(self, walker: Walker, path: bytes, entry: Entry) -> bytes | None:
        """The blob's bytes read from the working tree, when the file is that blob.

        Only tried for the blob HEAD holds at `path` (the commit a re-check walks is
        usually HEAD): reading a big file beats inflating the object. The file counts
        as the blob when git's own stat test says so (as `git status` trusts it), else
        when its sha1 as a git blob equals the blob id.
        """
        if walker.head_blobs.get(path) != entry.sha:
            return None
        full = str(Path(self.agent_root, os.fsdecode(path)))
        try:
            st = os.lstat(full)
            if not stat.S_ISREG(st.st_mode) or st.st_size < _WORKTREE_READ_MIN:
                return None
            with open_file(full) as fh:
                data = fh.read()
        except OSError:
            return None
        if self._stat_index is None:
            self._stat_index = StatIndex(self.repo, st.st_size)
        in_repo = self.prefix + b"/" + path if self.prefix else path
        if len(data) == st.st_size and self._stat_index.unchanged(in_repo, entry.sha, st):
            walker.objects.lengths[entry.sha] = len(data)
            return data  # git's own stat test: the file holds the staged (= HEAD) blob
        if blob_id(data) != entry.sha:  # the stat test could not prove it
            return None
        walker.objects.lengths[entry.sha] = len(data)
        return data

    def extends_in_file(self, walker: Walker, path: bytes, entry: Entry, old_sha: bytes,
                        length: int | None) -> bool:
        """True when HEAD's blob `entry` at `path` provably extends blob `old_sha` of
        `length` bytes, read from the working file in pieces (neither blob inflated nor
        held): git's stat test says the file is that blob, and its first `length` bytes
        hash to `old_sha` as a git blob (with the one-parent rule's newline). False when
        it cannot tell: the caller compares as usual. `length` is a hint (hash-checked).
        """
        if (length is None or len(old_sha) != 40 or walker.head_blobs.get(path) != entry.sha
                or length < _WORKTREE_READ_MIN):
            return False
        full = str(Path(self.agent_root, os.fsdecode(path)))
        try:
            st = os.lstat(full)
            if not stat.S_ISREG(st.st_mode) or st.st_size < length:
                return False
            if self._stat_index is None:
                self._stat_index = StatIndex(self.repo, st.st_size)
            in_repo = self.prefix + b"/" + path if self.prefix else path
            if not self._stat_index.unchanged(in_repo, entry.sha, st):
                return False
            fd = open_regular(full)
            with os.fdopen(fd, "rb", buffering=0) as fh:
                if os.fstat(fd).st_ino != st.st_ino:
                    return False
                digest = blob_hasher(length)
                piece = memoryview(bytearray(min(_HASH_PIECE, length)))
                left, last = length, 0
                while left:
                    got = fh.readinto(piece[:min(left, len(piece))])
                    if not got:
                        return False
                    digest.update(piece[:got])
                    last, left = piece[got - 1], left - got
                after = fh.read(1)
        except OSError:
            return False
        if digest.hexdigest().encode() != old_sha:
            return False
        if last != 0x0A and st.st_size != length and after != b"\n":
            return False  # an unterminated last line extended
        walker.objects.lengths[entry.sha] = st.st_size
        walker.objects.lengths.setdefault(old_sha, length)
        return True

    def check_head(self, walker: Walker, head: bytes) -> dict[bytes, int]:
        """The log is committed and the working tree extends HEAD; return tip lengths.

        Leaves what it proved about the log in ``walker.result.tip`` (a `TipFacts`)."""
        tip_lengths: dict[bytes, int] = {}
        tip = TipFacts(self.repo.commondir(), self.prefix, walker.log_path,
                       proven=set(getattr(walker, "proven", ())))
        walker.result.tip = tip
        try:
            root = walker.objects.subtree(walker.tree_of(head), self.prefix)
            files = list(walker.objects.append_only_files(
                root, walker.paths_of(head, root))) if root else []
        except ObjectError as exc:
            if not (isinstance(exc, TreeError) and head in walker.bad):  # said by the walk
                walker.fail(f"HEAD cannot be read: {exc}", commit=head)
            return tip_lengths
        if not any(path == walker.log_path and stat.S_ISREG(e.mode) for path, e in files):
            walker.fail(f"{os.fsdecode(walker.log_path)} is not committed in HEAD: the log is not "
                      "committed", path=walker.log_path)
        files = [(path, entry) for path, entry in files if stat.S_ISREG(entry.mode)]
        stats = {path: self._lstat(path) for path, _ in files}
        index = StatIndex(self.repo, sum(st.st_size for st in stats.values()
                                         if isinstance(st, os.stat_result)))
        for path, entry in files:
            relation = self._check_working_file(walker, path, entry, stats[path], index)
            if entry.sha in walker.objects.lengths:
                tip_lengths[entry.sha] = walker.objects.lengths[entry.sha]
            if path == walker.log_path:
                tip.head_log, tip.worktree = entry.sha, relation
                tip.head_length = walker.objects.lengths.get(entry.sha)
                if relation == SAME and tip.head_length is None:
                    st = stats[path]
                    tip.head_length = st.st_size if isinstance(st, os.stat_result) else None
                try:
                    tip.chain = log_chain(walker, head)
                except ObjectError:
                    tip.chain = []
        return tip_lengths

    def _lstat(self, path: bytes) -> os.stat_result | OSError:
        try:
            return os.lstat(str(Path(self.agent_root, os.fsdecode(path))))
        except OSError as exc:
            return exc

    def _check_working_file(self, walker: Walker, path: bytes, entry: Entry,
                            st: os.stat_result | OSError, index: StatIndex) -> str | None:
        """The working copy of HEAD's `path` must extend the committed blob `entry`;
        return SAME or EXTENDS as proved, None when it failed."""
        if isinstance(st, FileNotFoundError):
            walker.fail("working tree: committed append-only file is missing; restore it with "
                      "`git checkout HEAD -- <path>`", path=path)
            return None
        if isinstance(st, os.stat_result) and stat.S_ISLNK(st.st_mode):
            walker.fail("working tree: append-only file is a symlink", path=path)
            return None
        if isinstance(st, os.stat_result) and not stat.S_ISREG(st.st_mode):
            # Never open a FIFO or device: reading it could block or never end.
            walker.fail("working tree: append-only file is not a regular file", path=path)
            return None
        full = self.prefix + b"/" + path if self.prefix else path
        if isinstance(st, os.stat_result) and index.unchanged(full, entry.sha, st):
            return SAME  # git's own stat test says the file holds the committed blob
        try:
            if isinstance(st, OSError):
                raise st
            with open_file(str(Path(self.agent_root, os.fsdecode(path)))) as fh:
                data = fh.read()
        except OSError as exc:
            walker.fail(f"working tree: cannot read the file ({exc})", path=path)
            return None
        committed = walker.objects.recent_blob(entry.sha)
        if committed is None:
            length = walker.objects.lengths.get(entry.sha)
            if length is not None and extends_by_hash(entry.sha, length, data):
                return SAME if length == len(data) else EXTENDS
        try:
            if committed is None:
                committed = walker.objects.blob(entry.sha)
            problem = extension_problem(committed, data)
        except ObjectError as exc:
            walker.fail(f"working tree: cannot read the committed version: {exc}", path=path)
            return None
        if problem is not None:
            line, reason = problem
            walker.fail(f"working tree does not extend HEAD: {reason} ({WORKTREE_HINT})",
                      path=path, line=line)
            return None
        walker.objects.lengths.setdefault(entry.sha, len(committed))
        return SAME if len(committed) == len(data) else EXTENDS


def log_blob(walker: Walker, sha: bytes) -> tuple[bytes, bytes] | None:
    """(log path, blob id) of commit `sha`'s log (where its own manifest puts it) when
    it is a regular file in the agent root, else None."""
    root = walker.objects.subtree(walker.tree_of(sha), walker.prefix)
    if root is None:
        return None
    path = walker.paths_of(sha, root).log
    entry = walker.objects.entry_at(root, path)
    if entry is None or not stat.S_ISREG(entry.mode):
        return None
    return path, entry.sha


def log_chain(walker: Walker, head: bytes, limit: int = 32) -> list[bytes]:
    """HEAD's log blob, then its one-parent ancestors' while check 4 verified each step.

    A commit with one parent that check 4 verified (walked this run without a failure,
    its parents not failing either) has a log that starts with its parent's when both
    keep it at the same path. The chain follows the commits walked this run and stops
    after the first one verified by an earlier run (a re-check's saved states are of
    the blobs at the tips it checked before)."""
    found = log_blob(walker, head)
    if found is None:
        return []
    chain = [found[1]]
    sha, path = head, found[0]
    for _ in range(limit):
        if sha in walker.bad or sha in walker.cached:
            break
        info = walker.info.get(sha)
        if not isinstance(info, CommitInfo) or len(info.parents) != 1:
            break
        parent = info.parents[0]
        if parent in walker.bad:
            break
        found = log_blob(walker, parent)
        if found is None or found[0] != path:
            break
        chain.append(found[1])
        sha = parent
    return chain


class StatIndex:
    """git's stat test (`indexstat`, the one home the guard shares): a file whose lstat
    matches its non-racy index entry holds that blob. Any doubt (racy entry, flags, an
    index it cannot read) means "read it"."""

    def __init__(self, repo: GitDirs, file_bytes: int) -> None:
        self.index_path = repo.index_path()

    def unchanged(self, path: bytes, sha: bytes, st: os.stat_result) -> bool:
        found = index_entry_stat(self.index_path, path, sha)
        return found is not None and stat_proves(found, st)
