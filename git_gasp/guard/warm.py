"""Work the hook's guard will need, started on other threads while the rest of the
guard (the checks' rules, the event parser) is still being imported.

A guarded commit spends most of its time in a few waits: git comparing the index with
HEAD (``git diff-index``), reading the staged log from the work tree, and hashing its
first bytes to prove it extends HEAD's version. None of these needs the guard's rules,
so `Warm.start` begins them at once, on two threads: the diff against HEAD, then
HEAD's entries for the paths that say whether the top directory and ``state/`` are
agent roots (``git ls-tree``); and once the diff names HEAD's log blob, the read of
the top root's log and the blob id of its first bytes as long as the cached index of
that blob says HEAD's log is. The guard takes what matches what it asks for (the same
index, commit, path and length) and does the rest itself: a guess that misses costs
nothing but the wasted work, and every fact is still proved the usual way (the stat
data, the blob ids), never taken on trust.
"""

from __future__ import annotations

import _thread
import os

from git_gasp.base.fileops import open_regular
from git_gasp.base.files import open_file

# imported here, not on the threads: two threads importing at once can deadlock
from git_gasp.guard.diffindex import diff_index
from git_gasp.guard.staged import File, TreeFiles, index_file
from git_gasp.odb.blobid import blob_id
from git_gasp.odb.gitdirs import GitDirs, locate

LOG = "state/events.jsonl"  # the log of an agent at the top of the work tree
# what the guard looks up in HEAD when that log changes: the AGENT.md and log of the
# top directory and of state/ (is either an agent root?)
MARKERS = (b"AGENT.md", LOG.encode(), b"state/AGENT.md", b"state/" + LOG.encode())
_CACHE_PREFIX, _CACHE_SUFFIX = "guard-", ".facts"


class _Done:
    """A flag one thread raises once and others wait for (a held lock)."""

    def __init__(self) -> None:
        self._lock = _thread.allocate_lock()
        self._lock.acquire()

    def set(self) -> None:
        self._lock.release()

    def wait(self) -> None:
        self._lock.acquire()
        self._lock.release()


class Warm:
    """The diff and the log read begun for the hook in `repo` (see the module docstring)."""

    def __init__(self, repo: GitDirs, index_path: str) -> None:
        self.repo, self.index_path = repo, index_path
        self._diff: tuple[str, list] | None = None  # (target, rows)
        self._tree: tuple[bytes, dict[bytes, File | None]] | None = None  # HEAD's markers
        self._log: tuple[bytes, os.stat_result, int | None, bytes | None] | None = None
        self._diff_done, self._git_done, self._log_done = _Done(), _Done(), _Done()

    @classmethod
    def start(cls, cwd: str) -> Warm | None:
        """Begin the work for the repository around `cwd` (None: nothing to begin).
        Threads start without waiting for them to run (``_thread``): on a busy
        machine a thread may get its first slice only after a while."""
        try:
            repo = locate(cwd)
            if repo is None:
                return None
            warm = cls(repo, index_file(repo))
            head = repo.head()
        except (OSError, ValueError):
            return None
        _thread.start_new_thread(warm._run_git, (head if isinstance(head, bytes) else None,))
        _thread.start_new_thread(warm._read_log, ())
        return warm

    def _run_git(self, head: bytes | None) -> None:
        """The diff against HEAD, then HEAD's markers (`MARKERS`)."""
        try:
            if head is not None:
                try:
                    self._diff = (head.decode(), list(diff_index(self.repo, self.index_path,
                                                                 head.decode())))
                except Exception:  # noqa: BLE001 - the guard runs it again, reports what fails
                    self._diff = None
                self._diff_done.set()
                try:
                    tree = TreeFiles(self.repo, head)
                    tree.prefetch(MARKERS)
                    self._tree = (head, dict(tree._found))
                except Exception:  # noqa: BLE001 - the guard looks them up again
                    self._tree = None
        finally:
            if head is None:
                self._diff_done.set()
            self._git_done.set()

    def _read_log(self) -> None:
        """Once the diff says the top root's log changed: its bytes, and the blob id of
        as many of them as HEAD's version has (by its cached index)."""
        try:
            self._diff_done.wait()
            head_log = self._head_log()
            if head_log is None:
                return  # the log is not part of this commit (or the diff failed)
            try:
                fd = open_regular(os.path.join(self.repo.path, LOG))
                try:
                    with os.fdopen(os.dup(fd), "rb") as f:
                        data = f.read()
                    after = os.fstat(fd)
                finally:
                    os.close(fd)
                length = _cached_length(self.repo.commondir(), head_log)
                prefix = None
                if length is not None and length <= len(data):
                    prefix = blob_id(memoryview(data)[:length])
                self._log = (data, after, length, prefix)
            except (OSError, ValueError):
                self._log = None
        finally:
            self._log_done.set()

    def _head_log(self) -> bytes | None:
        """HEAD's log blob id when the diff says the staged log differs from it."""
        if self._diff is None:
            return None
        for path, old, new, _status in self._diff[1]:
            if path == LOG.encode() and old is not None and new is not None:
                return old[1]
        return None

    def join(self) -> None:
        self._git_done.wait()
        self._log_done.wait()

    def diff(self, index_path: str, target: str) -> list | None:
        """The diff rows of the index at `index_path` against `target`, if begun so."""
        self._diff_done.wait()
        if self._diff is None or index_path != self.index_path or self._diff[0] != target:
            return None
        return self._diff[1]

    def tree(self, commit: bytes) -> dict[bytes, File | None]:
        """What HEAD (`commit`) holds at the markers of the top root and its state/."""
        self._git_done.wait()
        if self._tree is None or self._tree[0] != commit:
            return {}
        return dict(self._tree[1])

    def log(self, path: bytes, worktree: str | None
            ) -> tuple[bytes, os.stat_result, int | None, bytes | None] | None:
        """(bytes, their file's stat after the read, prefix length, its blob id) of the
        work-tree file `path`, if that is the one read."""
        self._log_done.wait()
        if self._log is None or path != LOG.encode() or worktree != self.repo.path:
            return None
        return self._log


def _cached_length(common_dir: str, blob_id: bytes) -> int | None:
    """The length the cached log index of blob `blob_id` covers, read from its header
    (None when there is none)."""
    where = os.path.join(common_dir, "gasp")
    tail = "-" + blob_id.decode() + _CACHE_SUFFIX
    try:
        names = [n for n in os.listdir(where) if n.startswith(_CACHE_PREFIX) and n.endswith(tail)]
    except OSError:
        return None
    for name in names:
        try:
            with open_file(os.path.join(where, name)) as f:
                words = f.readline(512).split(b" ")
            if len(words) > 5 and words[3] == blob_id:
                return int(words[4])
        except (OSError, ValueError):
            continue
    return None
