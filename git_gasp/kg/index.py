"""The search index cache, so search/info/view do not re-read every file.

The index holds the graph as committed at HEAD. It is a disposable cache in the
worktree's git dir (`<gitdir>/perstate-index/`), keyed by the HEAD commit, which
is read from the ref files: checking freshness costs one `git rev-parse` for the
git dir, not a scan of 400,000 files. When HEAD moved, only the blobs that
`git diff-tree` names are read (one `git cat-file --batch`); a missing or
unreadable cache is rebuilt from the tree the same way. Uncommitted hand edits
are not part of the graph until committed (`kg save` commits everything it
writes); `uncommitted=True` (`--uncommitted` on the CLI) overlays them, at the
cost of one `git status`.

`index.bin` is one packed part (format: `packed`), replaced atomically.
After a save, rewriting 190 MB for three changed files would cost seconds, so
a change set up to DELTA_MAX files goes to `delta.bin` instead: the changed
records packed the same way plus the base documents they replace. A `Graph`
is the base and the delta read together; a bigger change rebuilds the base.
"""

from __future__ import annotations

import contextlib
import gc
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from git_gasp.base import git
from git_gasp.base.fileops import UnsafePath
from git_gasp.base.files import MAX_FILE, atomic_write, read_text
from git_gasp.base.progress import Progress
from git_gasp.kg.packed import (
    VERSION,
    Graph,
    Part,
    doc_numbers,
    load_file,
    pack,
    repack,
    unpack,
)
from git_gasp.kg.records import R_PATH, parse_file, read_record, utf8_name

__all__ = ["DELTA_MAX", "Graph", "Part", "State", "head_commit", "load", "parse_file",
           "read_record", "worktree_state"]

DELTA_MAX = 20_000


@dataclass
class State:
    head: str
    dirty: list[list[Any]]  # [path, mtime_ns, size] of changed files under entities/


def _hexsha(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def head_commit(root: Path, gd: Path | None = None) -> str:
    """HEAD's commit id ("" when unborn), read from the ref files under the git dir
    `gd` (looked up when not given); git as a fallback."""
    try:
        gd = gd or git.git_dir(root)
        head = read_text(gd / "HEAD").strip()
        if _hexsha(head):
            return head
        if head.startswith("ref: refs/"):
            ref = head[5:]
            common = git.common_dir(gd)
            for base in (gd, common):
                p = base / ref
                if p.is_file():
                    val = read_text(p).strip()
                    if _hexsha(val):
                        return val
                    raise ValueError(val)
            packed = common / "packed-refs"
            if packed.is_file():
                for line in read_text(packed, limit=MAX_FILE).splitlines():
                    parts = line.split(" ", 1)
                    if len(parts) == 2 and parts[1] == ref and _hexsha(parts[0]):
                        return parts[0]
            return ""
    except (OSError, ValueError, Exception):  # noqa: BLE001 - anything odd: ask git
        pass
    return git.out(root, "rev-parse", "-q", "--verify", "HEAD", check=False)


def worktree_state(root: Path) -> State:
    """HEAD and the uncommitted changes under entities/, from one `git status`."""
    proc = git.run(
        root, "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=normal",
        "--no-renames", "--ignore-submodules", "--", "entities",
    )
    head = ""
    paths: list[str] = []
    for entry in proc.stdout.decode("utf-8", "surrogateescape").split("\0"):
        if entry.startswith("# branch.oid "):
            head = entry.split()[-1]
            if head == "(initial)":
                head = ""
        elif entry[:2] in ("1 ", "u "):
            paths.append(entry.split(" ", 8 if entry[0] == "1" else 10)[-1])
        elif entry.startswith("? "):
            rel = entry[2:]
            if rel.endswith("/"):  # an untracked directory: list what is in it
                for dirpath, _dirs, files in os.walk(root / rel):
                    for f in files:
                        full = os.path.join(dirpath, f)
                        paths.append(os.path.relpath(full, root).replace(os.sep, "/"))
            else:
                paths.append(rel)
    dirty: list[list[Any]] = []
    for path in paths:
        if not utf8_name(path):  # reported and skipped, never fatal to every kg command
            continue
        try:
            st = os.stat(root / path)
            dirty.append([path, st.st_mtime_ns, st.st_size])
        except OSError:
            dirty.append([path, 0, -1])
    dirty.sort()
    return State(head, dirty)


def _write(gd: Path, path: Path, data: bytes) -> None:
    """Replace a cache file under the git dir `gd` (rebuilt when lost: no fsync)."""
    atomic_write(path, data, root=gd, durable=False, mode=0o600, make_parents=True)


def _cat_blobs(root: Path, shas: list[str]) -> list[bytes]:
    """The contents of `shas`, in order, from one `git cat-file --batch`."""
    if not shas:
        return []
    proc = git.run(root, "cat-file", "--batch", input=("\n".join(shas) + "\n").encode())
    data = proc.stdout
    out: list[bytes] = []
    pos = 0
    for _ in shas:
        nl = data.index(b"\n", pos)
        header = data[pos:nl].split()
        if len(header) != 3 or header[1] != b"blob":
            out.append(b"")
            pos = nl + 1
            continue
        size = int(header[2])
        out.append(data[nl + 1 : nl + 1 + size])
        pos = nl + 1 + size + 1
    return out


def _tree_blobs(root: Path, head: str) -> list[tuple[str, str]]:
    """(sha, path) of every blob under entities/ at `head`."""
    proc = git.run(root, "ls-tree", "-r", "-z", "--full-tree", head, "--", "entities")
    out = []
    for entry in proc.stdout.decode("utf-8", "surrogateescape").split("\0"):
        if not entry:
            continue
        meta, _, path = entry.partition("\t")
        parts = meta.split()
        if not utf8_name(path):
            continue  # reported and skipped
        if len(parts) == 3 and parts[1] == "blob" and parts[0] in ("100644", "100755"):
            out.append((parts[2], path))  # symlinks (120000) are not graph files
    return out


def _tree_changes(root: Path, old: str, new: str) -> list[tuple[str, str]] | None:
    """(new sha or "" for deleted, path) between two commits; None if git cannot tell."""
    proc = git.run(root, "diff-tree", "-r", "-z", "--no-renames", old, new, "--", "entities",
                   check=False)
    if proc.returncode != 0:
        return None
    items = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
    out = []
    for meta, path in zip(items[0::2], items[1::2], strict=False):
        parts = meta.split()
        if len(parts) < 5 or not utf8_name(path):
            continue
        new_sha = "" if parts[4].startswith("D") or set(parts[3]) == {"0"} else parts[3]
        if parts[1] == "160000" or (new_sha and parts[1] not in ("100644", "100755")):
            new_sha = ""
        out.append((new_sha, path))
    return out


def _read_blobs(root: Path, todo: list[tuple[str, str]],
                progress: Progress | None = None) -> list[list[Any]]:
    """Records for (sha, path) pairs; deleted ("" sha) and non-graph paths are skipped;
    `progress` is told (files read, files to read) every 256 files."""
    shas = [sha for sha, _ in todo if sha]
    contents = iter(_cat_blobs(root, shas))
    out = []
    for n, (sha, rel) in enumerate(todo, 1):
        if sha:
            rec = parse_file(rel, next(contents))
            if rec is not None:
                out.append(rec)
        if progress is not None and (n % 256 == 0 or n == len(todo)):
            progress(n, len(todo))
    return out


def _build(root: Path, gd: Path, head: str, progress: Progress | None = None) -> Part:
    """A fresh base for `head`, written to index.bin (and any delta dropped)."""
    idir = gd / "perstate-index"
    gc_was = gc.isenabled()
    gc.disable()  # 400k small containers: the cyclic GC would only rescan them
    try:
        records = _read_blobs(root, _tree_blobs(root, head), progress) if head else []
        data = pack(records, {"version": VERSION, "head": head, "token": os.urandom(8).hex()})
        del records
    finally:
        if gc_was:
            gc.enable()
    try:
        _write(gd, idir / "index.bin", data)
        with contextlib.suppress(FileNotFoundError):
            (idir / "delta.bin").unlink()
    except (OSError, UnsafePath):
        pass  # a read-only (or linked) git dir: still answer from memory
    part = unpack(data)
    assert part is not None
    return part


def _delta(base: Part, records: list[list[Any]], changed: set[str], meta: dict) -> Part:
    part = unpack(pack(records, dict(meta, skip=doc_numbers(base, changed))))
    assert part is not None
    return part


def _attach(base: Part, delta: Part) -> Graph:
    base.skip = frozenset(delta.meta.get("skip", ()))
    return Graph([delta, base], delta.meta["head"])


def load(root: Path, *, uncommitted: bool = False, progress: Progress | None = None) -> Graph:
    """The graph committed at HEAD; with `uncommitted`, plus the worktree's edits;
    `progress` is told how a full build of the index reads the graph's files."""
    gd = git.git_dir(root)
    head = head_commit(root, gd)
    idir = gd / "perstate-index"
    base = load_file(idir / "index.bin")
    if base is None or base.meta.get("version") != VERSION:
        base = _build(root, gd, head, progress)
    graph: Graph | None = None
    changed: set[str] = set()
    if base.meta["head"] == head:
        graph = Graph([base], head)
    else:
        delta = load_file(idir / "delta.bin")
        if (delta is not None and delta.meta.get("base") == base.meta["token"]
                and delta.meta.get("head") == head):
            graph = _attach(base, delta)
            changed = set(delta.meta.get("changed", ()))
        else:
            changes = _tree_changes(root, base.meta["head"], head) if head else None
            if changes is None or len(changes) > DELTA_MAX:
                base = _build(root, gd, head, progress)
                graph = Graph([base], head)
            else:
                changed = {path for _, path in changes}
                meta = {"version": VERSION, "base": base.meta["token"], "head": head,
                        "token": os.urandom(8).hex(), "changed": sorted(changed)}
                delta = _delta(base, _read_blobs(root, changes), changed, meta)
                with contextlib.suppress(OSError, UnsafePath):
                    _write(gd, idir / "delta.bin", repack(delta))
                graph = _attach(base, delta)
    if not uncommitted:
        return graph
    st = worktree_state(root)
    if not st.dirty:
        return graph
    # worktree edits: the committed changes plus the dirty files, read from disk
    dirty = {d[0] for d in st.dirty}
    committed = []
    if len(graph.parts) == 2:
        committed = _read_blobs(root, _tree_changes(root, base.meta["head"], head) or [])
    recs = {r[R_PATH]: r for r in committed if r[R_PATH] not in dirty}
    for rel in dirty:
        rec = read_record(root, rel)
        if rec is not None:
            recs[rel] = rec
    overlay = _delta(base, list(recs.values()), changed | dirty,
                     {"version": VERSION, "head": head, "dirty": len(dirty)})
    return _attach(base, overlay)
