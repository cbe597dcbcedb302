"""Check 4's merge rule, judged by meaning (`protocol.appendonly.merge_result_problem`):
the parents' shared lines stay the start, every parent line is kept, in whatever order
git resolved the concurrent suffixes. Proven without reading content where the pack
prover can (`PackProver.proves_tails`), else decided from content. A mixin of
`walk.Walker`, whose commit loop and one-parent rule it shares."""

from __future__ import annotations

import stat
from collections import namedtuple

from git_gasp.odb.blobid import extends_by_hash
from git_gasp.odb.objects import Entry, ObjectError, short
from git_gasp.protocol.appendonly import AppendOnlyPaths, merge_result_problem


class Side(namedtuple("Side", "sha root paths")):
    """A parent of the commit being checked: its id (bytes), agent root tree (bytes or
    None) and append-only paths (`AppendOnlyPaths`)."""

    __slots__ = ()


class MergeRule:
    """The merge rule of the check-4 walk (a mixin: the walker's attributes are set by
    `Walker`)."""

    def _merge(self, sha: bytes, sides: list[Side], new_root: bytes | None,
               child: AppendOnlyPaths, seen: set[bytes]) -> None:
        targets: dict[bytes, None] = {}  # result paths to check, in a stable order
        sources: list[dict[bytes, bytes]] = []  # per parent: result path -> its path
        for side in sides:
            moves = side.paths.moves(child)
            source: dict[bytes, bytes] = {}
            for path, _old, new in self.objects.changes(side.root, new_root,
                                                        self._union(side.paths, child)):
                if path in child and self._symlink(sha, path, new, seen):
                    continue
                if path in side.paths and path not in moves:
                    targets[path] = None
            for old_path, (_role, new_path) in moves.items():
                if self.objects.entry_at(new_root, new_path) is None and \
                        self.objects.entry_at(new_root, old_path) is not None:
                    targets[old_path] = None  # it stayed where it was
                    continue
                source[new_path] = old_path
                targets[new_path] = None
            sources.append(source)
        contents: dict[bytes, bytes] = {}
        for path in targets:
            self._merged_file(sha, sides, sources, path, new_root, contents)

    def _merged_file(self, sha: bytes, sides: list[Side], sources: list[dict[bytes, bytes]],
                     path: bytes, new_root: bytes | None, contents: dict[bytes, bytes]) -> None:
        versions: list[tuple[Side, bytes, Entry]] = []  # (parent, its path, its entry)
        for side, source in zip(sides, sources, strict=True):
            old_path = source.get(path, path)
            if old_path not in side.paths:
                continue
            entry = self.objects.entry_at(side.root, old_path)
            if entry is not None and stat.S_ISREG(entry.mode):
                versions.append((side, old_path, entry))
        if not versions:
            return  # added by the merge
        new = self.objects.entry_at(new_root, path)
        if new is not None and stat.S_ISLNK(new.mode):
            return  # reported as a symlink
        if new is None:
            for side, old_path, _entry in versions:
                where = "" if old_path == path else f" (moved to {self.full_path(path)})"
                self.fail(f"append-only file of parent {short(side.sha)} is missing from the "
                          f"merge result{where}", commit=sha, path=old_path)
            return
        if all(entry.sha == new.sha for _side, _path, entry in versions):
            return
        if self._merge_proven([e.sha for _side, _path, e in versions], new.sha):
            self.result.stats.merges_proven += 1
            return
        self.result.stats.merges_read += 1
        try:
            data = self._new_content(new, contents, path)
            blobs = [self._parent_content(e, new.sha, data) for _side, _path, e in versions]
        except ObjectError as exc:
            self.fail(f"cannot compare with the merged parents: {exc}", commit=sha, path=path)
            return
        problem = merge_result_problem(blobs, data)
        if problem is None:
            return
        index, line, reason = problem
        side, old_path, _entry = versions[index]
        where = "" if old_path == path else f" (its {self.full_path(old_path)})"
        self.fail(f"merge loses lines of parent {short(side.sha)}{where}: {reason}",
                  commit=sha, path=path, line=line)

    def _merge_proven(self, parents: list[bytes], result: bytes) -> bool:
        """True if the merge rule holds for blob `result` against the `parents`' blobs,
        proven without reading content: every parent extends the result by the
        one-parent rule (each parent's lines are its first lines), or one does and
        every other parent's own lines (past what it shares with that one) are the
        result's last lines (`PackProver.proves_tails`: the merge driver's result)."""
        extends = [sha == result or self.extends_proven(sha, result)
                   for sha in parents]  # every pair asked: _parent_content
        if all(extends):
            return True
        if self.prover is None or not any(extends):
            return False
        others = [sha for ok, sha in zip(extends, parents, strict=True) if not ok]
        if not self.prover.proves_tails(parents[extends.index(True)], others, result):
            return False
        self.result.stats.merge_tails += 1
        return True

    def _parent_content(self, entry: Entry, result_sha: bytes, result: bytes) -> bytes:
        """A parent's blob: lately read, else the result's first bytes when the result
        is proven to extend it or they hash to it (the usual merge extends its first
        parent: no inflating), else read."""
        data = self.objects.recent_blob(entry.sha)
        if data is None:
            if self.prover is not None and (entry.sha, result_sha) in self.proven:
                exact = self.prover.length(entry.sha)  # from the pack, not a cached hint
                if exact is not None and len(result) >= exact:
                    return result[:exact]
            # The prover was asked: an unproven parent rarely is a prefix, so read it
            # rather than hash its length of the result for nothing.
            length = self._length(entry.sha) if self.prover is None else None
            if length is not None and extends_by_hash(entry.sha, length, result):
                return result[:length]
            data = self.objects.blob(entry.sha)
        return data
