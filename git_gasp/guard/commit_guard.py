"""The pre-commit guard: staged append-only files may only grow, and what they gain
must be valid.

Compares the index (``GIT_INDEX_FILE`` when git sets it) with HEAD, and during a
merge (``MERGE_HEAD``) with every merged parent, for each append-only file of every
agent root in the work tree. A root is a directory holding ``AGENT.md`` or
``state/events.jsonl`` in HEAD or the index. Appended log lines are checked against
checks 1, 5 and 7 given the committed log before them. Only HEAD's, the parents'
and the index's blobs are read: never the history. The committed log is not even
parsed when its index is cached (``guardcache``, per blob id): the staged blob is
proved to extend it by hashing its first bytes (a blob id is their sha1), and only
the lines new events refer to are parsed.
"""

from __future__ import annotations

import os
import re
import stat
import zlib
from collections import ChainMap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from dulwich.index import ConflictedIndexEntry, Index
from dulwich.objects import Blob, Commit
from dulwich.repo import Repo

from git_gasp.base.errors import GaspError
from git_gasp.conformance.rules import (
    causation_problems,
    entity_id,
    ops_cause_problem,
    pairing_problems,
    restatement_problems,
    roundtrip_problem,
)
from git_gasp.guard.committed_log import OldLog, TooLarge
from git_gasp.guard.index_cache import FactsCache
from git_gasp.protocol.appendonly import (
    LOG_PATH,
    extends_by_hash,
    extension_problem,
    is_append_only,
    merge_problem,
)
from git_gasp.protocol.envelope import OPS_KIND, EnvelopeError, Event, parse_line, split_lines
from git_gasp.protocol.vocab import ENTITY_CREATING
from git_gasp.store.gitrepo import open_repo

ONE_PARENT = "append-only, one-parent rule"
MERGE_RULE = "append-only, merge rule"
CHECK1, CHECK5, CHECK7 = "check 1, envelope", "check 5, causation", "check 7, pairing"

FIXES = {
    ONE_PARENT: "append-only files may only grow at the end: put the committed lines back "
                "as they were (`git show HEAD:{path}` has them) and append a correcting "
                "event instead",
    MERGE_RULE: "the merge result must keep every line of each parent in order: redo the "
                "merge with the GASP merge driver (`git gasp install-hooks` registers it), "
                "or add the missing lines back",
    CHECK1: "each appended line must be one event envelope (id, schema_version, ts_ms, "
            "actor, kind, payload, causation_id, correlation_id) ending in a newline; fix "
            "or remove the line in the file, then `git add` it again",
    CHECK5: "event ids must be new, and causation_id must name an earlier event (only "
            "*.created, *.started and ops-only events may have none); fix the line and "
            "`git add` it again",
    CHECK7: "record each entity-creating event together with exactly one state.ops_applied "
            "event whose causation_id names it and whose CreateNode creates its payload.id "
            "(same kind and status); ops events name their domain event, never another ops "
            "event",
}
_DELETED_FIX = ("append-only files may never be removed: restore it with "
                "`git restore --staged --worktree --source=HEAD -- {path}`")


@dataclass
class Rejection:
    """One reason the commit is refused."""

    path: str  # relative to the work tree top
    line: int | None
    rule: str
    message: str
    fix: str

    def to_text(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: [{self.rule}] {self.message}"


_File = tuple[int, bytes]  # (mode, blob id)


class _Guard:
    def __init__(self, repo: Repo, index_path: str, cache: FactsCache | None = None) -> None:
        self.repo = repo
        self.store = repo.object_store
        self.rejections: list[Rejection] = []
        self.index: dict[bytes, _File] = {}
        self.conflicted: set[bytes] = set()
        for path, entry in Index(index_path).items():
            if isinstance(entry, ConflictedIndexEntry):
                self.conflicted.add(path)
            else:
                self.index[path] = (entry.mode, entry.sha)
        self.head = self._files_of_commit(self._head())
        self.parents = [self._files_of_commit(sha) for sha in self._merge_heads()]
        self._blobs: dict[bytes, bytes] = {}
        self._declared: dict[bytes, frozenset[bytes]] = {}
        self.cache = cache
        # (blob id, committed log's index, appended events): indexed once the commit passes
        self.staged_logs: list[tuple[bytes, OldLog, list[Event]]] = []

    # ---- reading git

    def _head(self) -> bytes | None:
        try:
            return self.repo.refs[b"HEAD"]
        except KeyError:
            return None  # unborn branch: the first commit

    def _merge_heads(self) -> list[bytes]:
        path = os.path.join(self.repo.controldir(), "MERGE_HEAD")
        try:
            with open(path, "rb") as f:
                return [w for w in f.read().split() if w]
        except FileNotFoundError:
            return merge_heads_from_env()
        except OSError as exc:
            raise GaspError(f"cannot read {path}: {exc}") from None

    def _files_of_commit(self, sha: bytes | None) -> dict[bytes, _File]:
        if sha is None:
            return {}
        try:
            commit = self.store[sha]
            if not isinstance(commit, Commit):
                raise GaspError(f"{sha.decode()} is not a commit")
            return {e.path: (e.mode, e.sha) for e in self.store.iter_tree_contents(commit.tree)}
        except KeyError:
            raise GaspError(f"commit {sha.decode()} is missing from the object store") from None

    def blob(self, sha: bytes) -> bytes:
        data = self._blobs.get(sha)
        if data is None:
            data = self._loose_blob(sha)
        if data is None:
            try:
                obj = self.store[sha]
            except KeyError:
                raise GaspError(f"blob {sha.decode()} is missing from the object store") from None
            if not isinstance(obj, Blob):
                raise GaspError(f"object {sha.decode()} is not a blob")
            data = obj.as_raw_string()
        self._blobs[sha] = data
        return data

    def _loose_blob(self, sha: bytes) -> bytes | None:
        """A loose blob's bytes read directly (dulwich's reader copies them several
        times); None for anything else (packed, alternates, odd): dulwich reads it."""
        root = getattr(self.store, "path", None)
        if not isinstance(root, str) or len(sha) not in (40, 64):
            return None
        path = os.path.join(root, sha[:2].decode(), sha[2:].decode())
        try:
            with open(path, "rb") as f:
                raw = f.read()
            head = zlib.decompressobj().decompress(raw, 32)  # "blob <size>\0": presize
            size = len(head) + int(head[5:head.index(b"\x00")]) if b"\x00" in head else 0
            data = zlib.decompress(raw, bufsize=max(size, zlib.DEF_BUF_SIZE))
        except (OSError, zlib.error, ValueError):
            return None
        nul = data.find(b"\x00", 0, 32)
        if nul < 0 or data[:nul] != b"blob %d" % (len(data) - nul - 1):
            return None
        return data[nul + 1:]

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

    def _log_location(self, root: bytes, files: dict[bytes, _File]) -> bytes | None:
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
                            _DELETED_FIX)
            return
        is_log = rel == LOG_PATH or rel in self._declared_of(root)
        base: bytes | None = b""
        known: OldLog | None = None
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

    def _cached(self, old_sha: bytes, new: bytes) -> OldLog | None:
        """HEAD's log index from the cache, if `new` provably extends that blob (then
        the blob itself is never read)."""
        if self.cache is None:
            return None
        length = self.cache.header(old_sha)
        if length is None or not extends_by_hash(old_sha, length, new):
            return None
        return self.cache.load(old_sha, new)

    def _indexed(self, old_sha: bytes | None, base: bytes, new: bytes) -> OldLog:
        """The index of the committed log `base` (blob `old_sha`), which `new` extends:
        grown from a cached older version of it when there is one, then cached."""
        if old_sha is None or not base:
            return OldLog.empty(new)
        known = None
        if self.cache is not None:
            for sha, length in self.cache.ancestors():
                if length <= len(base) and extends_by_hash(sha, length, base):
                    known = self.cache.load(sha, base)
                    if known is not None:
                        break
        try:
            known = (known or OldLog.empty(base)).extended(base)
        except TooLarge:
            return OldLog.build(new, len(base))  # not cacheable: index it in place
        if self.cache is not None:
            self.cache.save(old_sha, known)
        return OldLog(new, known.length, known.line_count, known.keys, known.offsets)

    def check_appended(self, path: bytes, old: OldLog, new: bytes, new_sha: bytes) -> None:
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
            _Appended(self, path, old, events).check()

    def save_staged(self) -> None:
        """Cache the index of each staged log (the next commit's HEAD version)."""
        if self.cache is None:
            return
        for sha, old, events in self.staged_logs:
            try:  # the appended lines passed check 1: reuse their events, no second parse
                self.cache.save(sha, old.extended(old.data, events=events))
            except TooLarge:
                pass


class _Appended:
    """Checks 5 and 7 for appended events, with the committed log as context."""

    def __init__(self, guard: _Guard, path: bytes, old: OldLog, events: list[Event]) -> None:
        self.guard, self.path, self.old, self.events = guard, path, old, events
        self.new_first: dict[str, int] = {}
        self.new_by_id: dict[str, Event] = {}
        for e in events:
            self.new_first.setdefault(e.id, e.line)
            self.new_by_id.setdefault(e.id, e)

    def lookup(self, event_id: str) -> Event | None:
        if self.old.first_line(event_id) is not None:
            return self.old.event(event_id)
        return self.new_by_id.get(event_id)

    def check(self) -> None:
        self.causation()
        self.pairing()

    def causation(self) -> None:
        seen: dict[str, int] = {}
        view = ChainMap(self.old.first, seen)
        for e in self.events:
            for problem in causation_problems(e, view, self.new_first.get):
                self.guard.reject(self.path, e.line, CHECK5, problem)
            seen.setdefault(e.id, e.line)

    def pairing(self) -> None:
        old, reject = self.old, self.guard.reject
        entities = _Entities(old)
        for e in self.events:
            entity = entity_id(e.kind, e.payload)
            if entity is not None:
                entities.setdefault(entity, e.id)
                if old.ops_only_line(entity) is not None:
                    restater = old.ops_only_event(entity)
                    if restater is not None:
                        for problem in restatement_problems(restater, {entity: e.id}):
                            reject(self.path, e.line, CHECK7, problem)
        new_claims: dict[str, list[Event]] = {}
        for e in self.events:
            if e.kind != OPS_KIND:
                continue
            if e.causation_id is None:
                for problem in restatement_problems(e, entities):
                    reject(self.path, e.line, CHECK7, problem)
                continue
            problem = ops_cause_problem(e, self.lookup(e.causation_id))
            if problem:
                reject(self.path, e.line, CHECK7, problem)
            new_claims.setdefault(e.causation_id, []).append(e)
        domain = [e for e in self.events if e.kind in ENTITY_CREATING]
        appended_lines = {e.line for e in self.events}
        for cause_id in new_claims:
            if cause_id not in self.new_by_id and old.first_line(cause_id) is not None:
                event = old.event(cause_id)
                if event is not None and event.kind in ENTITY_CREATING:
                    domain.append(event)
        for e in domain:
            pairs = old.claim_events(e.id)
            pairs += new_claims.get(e.id, [])
            appended = e.line in appended_lines
            for line, problem in pairing_problems(e, pairs):
                if appended or line in appended_lines:
                    reject(self.path, line, CHECK7, problem)
                elif line == e.line:  # a committed domain event claimed again: blame the claim
                    reject(self.path, new_claims[e.id][0].line, CHECK7, problem)


class _Entities:
    """Entity id -> the domain event creating it first: the committed log's, then the
    appended events' (the mapping check 7's restatement rule takes)."""

    def __init__(self, old: OldLog) -> None:
        self.old = old
        self.new: dict[str, str] = {}

    def _get(self, entity: object) -> str | None:
        if type(entity) is not str:
            return None
        found = self.old.entity_creator(entity)
        return found if found is not None else self.new.get(entity)

    def setdefault(self, entity: str, event_id: str) -> None:
        if self._get(entity) is None:
            self.new[entity] = event_id

    def __contains__(self, entity: object) -> bool:
        return self._get(entity) is not None

    def __getitem__(self, entity: str) -> str:
        found = self._get(entity)
        if found is None:
            raise KeyError(entity)
        return found


def index_file(repo: Repo) -> str:
    """The index git wants checked: GIT_INDEX_FILE (relative to the cwd) or the repo's."""
    env = os.environ.get("GIT_INDEX_FILE")
    return os.path.abspath(env) if env else repo.index_path()


def merge_heads_from_env() -> list[bytes]:
    """The commits a running `git merge` merges, from the ``GITHEAD_<id>`` variables it
    sets for its hooks: git runs pre-merge-commit before it writes MERGE_HEAD."""
    heads = {name[len("GITHEAD_"):].lower() for name in os.environ if name.startswith("GITHEAD_")}
    return sorted(h.encode() for h in heads if _HEX.fullmatch(h))


_HEX = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def run_guard(cwd: Path, *, cache: bool = True) -> list[Rejection]:
    """Every reason the staged commit must be refused (empty: allow it).

    The merged parents are MERGE_HEAD's, or while `git merge` runs its hooks (no
    MERGE_HEAD yet), those named by its GITHEAD_<id> variables. `cache`: reuse and
    store the committed logs' indexes under the git dir."""
    repo, _prefix = open_repo(cwd)
    with repo:
        facts = FactsCache(repo.commondir()) if cache else None
        try:
            guard = _Guard(repo, index_file(repo), cache=facts)
        except FileNotFoundError:
            return []  # no index yet: nothing is staged
        for path, root, rel in guard.guarded():
            guard.check_path(path, root, rel)
        if not guard.rejections:
            guard.save_staged()
        return guard.rejections


def report(rejections: list[Rejection], limit: int = 50, hook: str = "pre-commit") -> str:
    """The text printed when the commit is refused: each problem, then each fix once."""
    n = len(rejections)
    ordered = sorted(rejections, key=lambda r: (r.path, r.line or 0))
    what = "merge commit" if hook == "pre-merge-commit" else "commit"
    lines = [f"git gasp: {hook}: {what} refused: {n} problem{'s' * (n != 1)} in GASP "
             "append-only files"]
    lines += [r.to_text() for r in ordered[:limit]]
    if n > limit:
        lines.append(f"... and {n - limit} more")
    fixes: dict[str, str] = {}
    for r in ordered:
        fixes.setdefault(r.fix, r.rule)
    lines += [f"fix ({rule}): {fix}" for fix, rule in fixes.items()]
    if hook == "pre-merge-commit":
        lines.append("(the merge is left uncommitted: fix the files, `git add` them and "
                     "`git commit`, or `git merge --abort`; `git merge --no-verify` skips "
                     "the guard)")
    else:
        lines.append("(the guard checks only what this commit adds; `git gasp check` checks "
                     "the whole repo; `git commit --no-verify` skips the guard)")
    return "\n".join(lines)
