"""The run-boundary commit: the log and the named paths only, with Run-Id / Goal /
Outcome trailers (spec Part I commit rules), made with dulwich.

The tree is HEAD's tree with just those paths replaced by their working-tree
content, so whatever else the user has staged is neither committed nor unstaged;
the index entries of the committed paths are updated to match. Hooks are not run.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from git_gasp.base.errors import GaspError


class CommitError(GaspError):
    """The boundary commit cannot be made as asked."""


def _trailer(name: str, value: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise CommitError(f"the {name} trailer needs a value")
    if "\n" in value or "\r" in value:
        raise CommitError(f"the {name} trailer value must be one line, not {value!r}")
    return f"{name}: {value.strip()}"


def run_message(run_id: str, goal: str | None, outcome: str) -> bytes:
    """`run <run-id>: <outcome>` + a blank line + the trailers."""
    lines = [_trailer("Run-Id", run_id)]
    if goal is not None:
        lines.append(_trailer("Goal", goal))
    lines.append(_trailer("Outcome", outcome))
    return f"run {run_id.strip()}: {outcome.strip()}\n\n" + "\n".join(lines) + "\n"


def _expand(root: Path, top: Path, paths: Iterable[str | os.PathLike]) -> list[bytes]:
    """Repo-relative byte paths for the named files (directories expand to their files)."""
    out: list[bytes] = []
    for p in paths:
        path = Path(p) if Path(p).is_absolute() else root / p
        if path.is_dir() and not path.is_symlink():
            for dirpath, dirnames, files in os.walk(path):
                dirnames[:] = [d for d in dirnames if d != ".git"]
                out += [os.fsencode(os.path.relpath(Path(dirpath, f), top)) for f in files]
        else:
            rel = os.path.relpath(os.path.abspath(path), top)
            if rel.startswith(".."):
                raise CommitError(f"{p} is outside the repository")
            out.append(os.fsencode(rel))
    return sorted({o.replace(os.sep.encode(), b"/") for o in out})


def commit_paths(root: Path, paths: Iterable[str | os.PathLike], message: bytes, *,
                 log_rel: str | None = None) -> bytes:
    """Commit exactly `paths` (relative to `root`) on top of HEAD; return the commit id.

    A path missing from the working tree is committed as a deletion — except the
    log, whose disappearance is refused when HEAD tracks it.
    """
    from dulwich.index import commit_tree, index_entry_from_stat
    from dulwich.objects import Blob

    from git_gasp.store.gitrepo import open_repo

    repo, prefix = open_repo(root)
    with repo:
        top = Path(repo.path)
        rels = _expand(Path(root), top, paths)
        try:
            head = repo.head()
        except KeyError:
            head = None
        entries: dict[bytes, tuple[bytes, int]] = {}
        if head is not None:
            tree_id = repo[head].tree
            for entry in repo.object_store.iter_tree_contents(tree_id):
                entries[entry.path] = (entry.sha, entry.mode)
        log_path = None
        if log_rel is not None:
            log_path = (prefix + b"/" if prefix else b"") + log_rel.encode()
        staged: list[tuple[bytes, bytes, int, os.stat_result]] = []
        changed = False
        for rel in rels:
            full = top / os.fsdecode(rel)
            try:
                st = os.lstat(full)
            except FileNotFoundError:
                if rel == log_path and rel in entries:
                    raise CommitError(f"{os.fsdecode(rel)} is tracked but missing from the "
                                      "working tree; refusing to commit its deletion") from None
                if entries.pop(rel, None) is not None:
                    changed = True
                continue
            if stat.S_ISLNK(st.st_mode):
                blob = Blob.from_string(os.fsencode(os.readlink(full)))
                mode = 0o120000
            elif stat.S_ISREG(st.st_mode):
                blob = Blob.from_string(full.read_bytes())
                mode = 0o100755 if st.st_mode & 0o111 else 0o100644
            else:
                raise CommitError(f"{os.fsdecode(rel)} is not a file")
            repo.object_store.add_object(blob)
            if entries.get(rel) != (blob.id, mode):
                changed = True
            entries[rel] = (blob.id, mode)
            staged.append((rel, blob.id, mode, st))
        if not changed and head is not None:
            raise CommitError("nothing to commit: the named paths match HEAD")
        tree = commit_tree(repo.object_store, [(p, s, m) for p, (s, m) in entries.items()])
        try:
            commit = repo.get_worktree().commit(message=message, tree=tree, no_verify=True)
        except ValueError as exc:
            raise CommitError(f"cannot commit: {exc}") from None
        index = repo.open_index()
        for rel, sha, mode, st in staged:
            index[rel] = index_entry_from_stat(st, sha, mode)
        for rel in rels:
            if rel not in entries and rel in index:
                del index[rel]
        index.write()
        return commit


def commit_run(root: Path, run: str, goal: str | None, outcome: str,
               extra_paths: Iterable[str | os.PathLike] = (), *,
               log_rel: str = "state/events.jsonl") -> bytes:
    """Commit the log + `extra_paths` as the closing commit of `run`; return its id.

    Refuses newlines in trailer values and a tracked log that went missing.
    """
    message = run_message(run, goal, outcome).encode()
    return commit_paths(root, [log_rel, *extra_paths], message, log_rel=log_rel)
