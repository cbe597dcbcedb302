"""Check 4 and the guard against a naive model, over random histories (issue 10).

Hypothesis builds histories in memory (a dulwich MemoryObjectStore): appends, in-place
edits, drops, unterminated last lines, manifest moves of the log (with or without its
history), branches and merges (criss-cross shapes included: any two commits may be
merged, in either order, with the union in either parent's order, git's trivial
"take the second parent's bytes", or a line dropped). Each commit's verdict from
`check_store` and from the guard's rules (`check_files`) is compared with a model
written here, independently of protocol.appendonly.
"""

from __future__ import annotations

from collections import Counter

import pytest
from dulwich.object_store import MemoryObjectStore
from dulwich.objects import Blob, Commit, Tree
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_gasp.conformance.history.check import check_store
from git_gasp.guard.commit_guard import check_files
from git_gasp.guard.rejection import MERGE_RULE, ONE_PARENT

pytestmark = pytest.mark.slow  # hypothesis over histories

DEFAULT, MOVED = b"state/events.jsonl", b"data/log.jsonl"
REG = 0o100644
_YAML = b"# a\n\n```yaml\nspec_version: 1\nagent_id: a\n%s```\n"


def manifest(log: bytes, style: int) -> bytes:
    if log == DEFAULT and style == 0:
        return _YAML % b""
    if style == 2:  # the Markdown Locations table
        table = b"\n## Locations\n\n| what | where |\n|---|---|\n| log | `%s` |\n" % log
        return _YAML % b"" + table
    return _YAML % (b"locations:\n  log: %s\n" % log)


# ---- the model ------------------------------------------------------------------

def log_path(files: dict[bytes, bytes]) -> bytes:
    """Where a commit's manifest puts the log (the model's own, tiny parser)."""
    text = files[b"AGENT.md"]
    return MOVED if MOVED in text else DEFAULT


def lines(data: bytes) -> list[bytes]:
    parts = data.split(b"\n")
    return parts[:-1] if parts[-1] == b"" else parts


def one_parent_ok(old: bytes, new: bytes) -> bool:
    if not new.startswith(old):
        return False
    return not (old and not old.endswith(b"\n") and len(new) > len(old)
                and new[len(old):len(old) + 1] != b"\n")


def merge_ok(parents: list[bytes], result: bytes) -> bool:
    split = [p.split(b"\n") for p in parents]  # whole lines are all but the last part
    shared = 0
    while all(len(s) - 1 > shared for s in split) and len({s[shared] for s in split}) == 1:
        shared += 1
    prefix = split[0][:shared]
    got = result.split(b"\n")
    if len(got) - 1 < shared or got[:shared] != prefix:
        return False
    have = Counter(lines(b"\n".join(got[shared:])))
    return all(not (Counter(lines(b"\n".join(s[shared:]))) - have) for s in split)


def model_ok(child: dict[bytes, bytes], parents: list[dict[bytes, bytes]]) -> bool:
    """Per parent: its log at its own path goes to the child's log path (or stays where
    it was, when the child has no file at its path but still has the old one)."""
    if not parents:
        return True
    q = log_path(child)
    groups: dict[bytes, list[bytes]] = {}
    for parent in parents:
        p = log_path(parent)
        if p not in parent:
            continue
        target = p if (p != q and q not in child and p in child) else q
        groups.setdefault(target, []).append(parent[p])
    for target, versions in groups.items():
        if target not in child:
            return False
        if len(parents) == 1:
            if not one_parent_ok(versions[0], child[target]):
                return False
        elif not merge_ok(versions, child[target]):
            return False
    return True


# ---- random histories ------------------------------------------------------------

_token = st.one_of(st.sampled_from([b"a", b"b", b"c"]), st.integers(0, 10**6).map(b"e%d".__mod__))


@st.composite
def histories(draw) -> list[tuple[dict[bytes, bytes], list[int]]]:
    commits: list[tuple[dict[bytes, bytes], list[int]]] = []
    root_log = b"".join(t + b"\n" for t in draw(st.lists(_token, max_size=3)))
    commits.append(({b"AGENT.md": manifest(DEFAULT, 0), DEFAULT: root_log}, []))
    for _ in range(draw(st.integers(1, 9))):
        op = draw(st.sampled_from(["append", "append", "edit", "drop", "move", "merge",
                                   "merge", "unterminated"]))
        k = draw(st.integers(0, len(commits) - 1))
        base = dict(commits[k][0])
        path = log_path(base)
        data = base.get(path, b"")
        parents = [k]
        if op in ("append", "unterminated"):
            new = b"".join(t + b"\n" for t in draw(st.lists(_token, min_size=1, max_size=3)))
            base[path] = data + (new[:-1] if op == "unterminated" else new)
        elif op in ("edit", "drop") and lines(data):
            ls = lines(data)
            i = draw(st.integers(0, len(ls) - 1))
            ls[i:i + 1] = [] if op == "drop" else [b"X" + ls[i]]
            base[path] = b"".join(x + b"\n" for x in ls)
        elif op == "move":
            other = MOVED if path == DEFAULT else DEFAULT
            how = draw(st.sampled_from(["with history", "with history", "empty",
                                        "keep old only", "drop both", "keep both"]))
            base[b"AGENT.md"] = manifest(other, draw(st.integers(0, 2)))
            if how in ("with history", "keep both"):
                base[other] = data + (b"m\n" if draw(st.booleans()) else b"")
            elif how == "empty":
                base[other] = b""
            if how in ("with history", "empty", "drop both"):
                base.pop(path, None)
        elif op == "merge":
            j = draw(st.integers(0, len(commits) - 1))
            if j == k:
                continue
            other = commits[j][0]
            theirs = other.get(log_path(other), b"")
            how = draw(st.sampled_from(["ours first", "theirs first", "theirs bytes", "drop"]))
            ours_l, theirs_l = lines(data), lines(theirs)
            if how == "theirs bytes":
                base[path] = theirs
            else:
                first, second = (ours_l, theirs_l) if how != "theirs first" else (theirs_l, ours_l)
                extra = list((Counter(second) - Counter(first)).elements())
                out = first + [x for x in second if x in extra and not extra.remove(x)]
                if how == "drop" and out:
                    out.pop(draw(st.integers(0, len(out) - 1)))
                base[path] = b"".join(x + b"\n" for x in out)
            parents = [k, j]
        commits.append((base, parents))
    return commits


class _Store:
    def __init__(self) -> None:
        self.store = MemoryObjectStore()
        self.blobs: dict[bytes, bytes] = {}
        self.time = 1_700_000_000

    def blob(self, data: bytes) -> bytes:
        blob = Blob.from_string(data)
        self.store.add_object(blob)
        self.blobs[blob.id] = data
        return blob.id

    def tree(self, files: dict[bytes, bytes]) -> bytes:
        subdirs: dict[bytes, dict[bytes, bytes]] = {}
        tree = Tree()
        for path, data in files.items():
            head, _, rest = path.partition(b"/")
            if rest:
                subdirs.setdefault(head, {})[rest] = data
            else:
                tree.add(head, REG, self.blob(data))
        for name, sub in subdirs.items():
            tree.add(name, 0o040000, self.tree(sub))
        self.store.add_object(tree)
        return tree.id

    def commit(self, files: dict[bytes, bytes], parents: list[bytes]) -> bytes:
        c = Commit()
        c.tree = self.tree(files)
        c.parents = parents
        c.author = c.committer = b"T <t@example.com>"
        self.time += 1
        c.author_time = c.commit_time = self.time
        c.author_timezone = c.commit_timezone = 0
        c.message = b"c\n"
        self.store.add_object(c)
        return c.id

    def sides(self, files: dict[bytes, bytes]) -> dict[bytes, tuple[int, bytes]]:
        return {path: (REG, self.blob(data)) for path, data in files.items()}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_check_4_and_the_guard_agree_with_the_model(history):
    s = _Store()
    ids: list[bytes] = []
    for files, parents in history:
        ids.append(s.commit(files, [ids[p] for p in parents]))
    # One tip merging every commit makes every commit reachable from it.
    tip = s.commit(history[-1][0], ids[::-1]) if len(ids) > 1 else ids[0]
    failing = {f.commit for f in check_store(s.store, tip).failures}
    for sha, (files, parents) in zip(ids, history, strict=True):
        expected = model_ok(files, [history[p][0] for p in parents])
        assert (sha.decode() not in failing) == expected, (files, parents)
        if not parents:
            continue
        index, head = s.sides(files), s.sides(history[parents[0]][0])
        others = [s.sides(history[p][0]) for p in parents[1:]]
        rejections = [r for r in check_files(index, head, others, s.blobs)
                      if r.rule in (ONE_PARENT, MERGE_RULE)]
        assert (not rejections) == expected, (files, parents, rejections)
