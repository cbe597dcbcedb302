"""The run-boundary commit: the log and the named paths only, with Run-Id / Goal /
Outcome trailers (spec Part I commit rules), tree built through `odb.write`.

The tree is HEAD's tree with just those paths replaced by their working-tree
content, so whatever else the user has staged is neither committed nor unstaged;
the index entries of the committed paths are updated to match. The user's git hooks
are not run (no pre-commit, commit-msg or post-commit): the guard's rules are applied
in-process to exactly what is committed, against HEAD (`guard.api.check_tree`). The
commit object is made by `git commit-tree`, so `commit.gpgsign` signs it as
`git commit` would.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from git_gasp.base import git
from git_gasp.base.errors import GaspError
from git_gasp.base.fileops import UnsafePath
from git_gasp.base.files import read_file, refuse_links
from git_gasp.guard.api import check_tree, refusal_line
from git_gasp.odb.database import ObjectDatabase
from git_gasp.odb.repo import open_repo
from git_gasp.odb.write import add_blob, stage, write_tree
from git_gasp.redact.redactor import redact_field, redact_text


class CommitError(GaspError):
    """The boundary commit cannot be made as asked."""


def _trailer(name: str, value: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise CommitError(f"the {name} trailer needs a value")
    if "\n" in value or "\r" in value:
        raise CommitError(f"the {name} trailer value must be one line, not {value!r}")
    return f"{name}: {value.strip()}"


def run_message(run_id: str, goal: str | None, outcome: str) -> bytes:
    """`run <run-id>: <outcome>` + a blank line + the trailers (the values redacted, as
    every stored string is: a commit message is history too)."""
    run_id, outcome = redact_field("run_id", run_id), redact_text(outcome)
    goal = redact_field("goal_id", goal) if goal is not None else None
    lines = [_trailer("Run-Id", run_id)]
    if goal is not None:
        lines.append(_trailer("Goal", goal))
    lines.append(_trailer("Outcome", outcome))
    return f"run {run_id.strip()}: {outcome.strip()}\n\n" + "\n".join(lines) + "\n"


def _expand(root: Path, top: Path, paths: Iterable[str | os.PathLike],
            git_dirs: list[Path] = ()) -> list[bytes]:
    """Repo-relative byte paths for the named files (directories expand to their files)."""
    out: list[bytes] = []
    for p in paths:
        path = Path(p) if Path(p).is_absolute() else root / p
        rel = os.path.relpath(os.path.abspath(path), top)
        if rel == ".." or rel.startswith(".." + os.sep):
            raise CommitError(f"{p} is outside the work tree; refusing to commit it")
        _refuse_git_dirs(os.fsencode(rel).replace(os.sep.encode(), b"/"), path, git_dirs)
        if path.is_dir() and not path.is_symlink():
            for dirpath, dirnames, files in os.walk(path):
                dirnames[:] = [d for d in dirnames if d != ".git"]
                out += [os.fsencode(os.path.relpath(Path(dirpath, f), top)) for f in files]
        else:
            out.append(os.fsencode(rel))
    return sorted({o.replace(os.sep.encode(), b"/") for o in out})


def _refuse_git_dirs(rel: bytes, full: Path, git_dirs: list[Path]) -> None:
    """A path inside the git dir (or named `.git` anywhere) is never committed."""
    text = os.fsdecode(rel)
    if ".git" in text.split("/"):
        raise CommitError(f"{text} is inside a .git directory; refusing to commit it")
    real = Path(os.path.realpath(full))
    for gdir in git_dirs:
        if real == gdir or gdir in real.parents:
            raise CommitError(f"{text} lies in the git dir ({gdir}); refusing to commit it")


def _git_dirs(root: Path, top: Path) -> list[Path]:
    """The git dirs of `root`'s repository whose files may not be committed: all but one
    that holds the work tree `top` itself (a linked worktree git-gasp keeps under the
    git dir, `store.statebranch`: its files are the work tree's, not the git dir's)."""
    real_top = Path(os.path.realpath(top))
    dirs = {Path(os.path.realpath(git.git_dir(root))),
            Path(os.path.realpath(git.common_dir(root)))}
    return sorted(d for d in dirs if d != real_top and d not in real_top.parents)


def _link_problem(full: Path, top: Path) -> str | None:
    """Why the link `full` may not be committed (it points outside the work tree), or None."""
    real = Path(os.path.realpath(full))
    top_real = Path(os.path.realpath(top))
    if real != top_real and top_real not in real.parents:
        return f"is a symbolic link to {os.readlink(full)}, outside the work tree"
    return None


def _signing(root: Path) -> list[str]:
    """`-S` when commit.gpgsign is true: the commit is signed by git as `git commit` would."""
    proc = git.run(root, "config", "--type=bool", "--get", "commit.gpgsign", check=False)
    return ["-S"] if proc.returncode == 0 and proc.stdout.strip() == b"true" else []


def make_commit(root: Path, tree: bytes, parent: bytes | None, message: bytes, *,
                ref: str = "HEAD", old: bytes | None = None) -> bytes:
    """Build the commit of `tree` on `parent` with `git commit-tree` (signed when
    commit.gpgsign says so) and move `ref` to it, only if `ref` still points at `old`
    (None: `parent` for HEAD, or that `ref` does not exist yet)."""
    if old is None and ref == "HEAD":
        old = parent
    args = ["commit-tree", *_signing(root), tree.decode()]
    if parent is not None:
        args += ["-p", parent.decode()]
    try:
        sha = git.run(root, *args, input=message).stdout.strip()
        git.run(root, "update-ref", "-m", message.splitlines()[0].decode("utf-8", "replace"),
                ref, sha.decode(), old.decode() if old is not None else "")
    except git.GitError as exc:
        lines = exc.stderr.strip().splitlines()
        raise CommitError(f"cannot commit: {lines[-1] if lines else exc}") from None
    return sha


def commit_paths(root: Path, paths: Iterable[str | os.PathLike], message: bytes, *,
                 log_rel: str | None = None, dry_run: bool = False) -> bytes | None:
    """Commit exactly `paths` (relative to `root`) on top of HEAD; return the commit id.

    A path missing from the working tree is committed as a deletion — except the
    log, whose disappearance is refused when HEAD tracks it. The new tree passes the
    guard's rules against HEAD (append-only files only grow, appended log lines pass
    checks 1, 5 and 7) or nothing is committed; paths in the git dir, outside the work
    tree, under a symlinked directory or linking outside the work tree are refused.
    `dry_run`: make every check (a match with HEAD included), commit nothing, return None.
    """
    repo, prefix = open_repo(root)
    with repo:
        top = Path(repo.path)
        git_dirs = _git_dirs(Path(root), top)
        rels = _expand(Path(root), top, paths, git_dirs)
        head = repo.head_commit()
        entries: dict[bytes, tuple[bytes, int]] = {}
        if head is not None:
            odb = ObjectDatabase(repo.object_store)
            entries = {path: (sha, mode) for path, (mode, sha)
                       in odb.files(odb.commit(head).tree).items()}
        log_path = None
        if log_rel is not None:
            log_path = (prefix + b"/" if prefix else b"") + log_rel.encode()
        staged: list[tuple[bytes, bytes, int, os.stat_result]] = []
        changed = False
        for rel in rels:
            full = top / os.fsdecode(rel)
            _refuse_git_dirs(rel, full, git_dirs)
            try:
                refuse_links(full.parent, top)
            except UnsafePath:
                raise CommitError(f"{os.fsdecode(rel)} lies under a symbolic link; refusing "
                                  "to commit it") from None
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
                problem = _link_problem(full, top)
                if problem is not None:
                    raise CommitError(f"{os.fsdecode(rel)} {problem}; refusing to commit it")
                data = os.fsencode(os.readlink(full))
                mode = 0o120000
            elif stat.S_ISREG(st.st_mode):
                data = read_file(full, root=top)
                mode = 0o100755 if st.st_mode & 0o111 else 0o100644
            else:
                raise CommitError(f"{os.fsdecode(rel)} is not a file")
            blob_id = add_blob(repo.object_store, data)
            if entries.get(rel) != (blob_id, mode):
                changed = True
            entries[rel] = (blob_id, mode)
            staged.append((rel, blob_id, mode, st))
        if not changed and head is not None and not dry_run:
            raise CommitError("nothing to commit: the named paths match HEAD")
        rejections = check_tree(repo, {p: (m, s) for p, (s, m) in entries.items()}, head)
        if rejections:
            raise CommitError(refusal_line(rejections))
        if dry_run:
            return None
        tree = write_tree(repo.object_store, {p: (m, s) for p, (s, m) in entries.items()})
        commit = make_commit(Path(root), tree, head, message)
        stage(repo, staged, [rel for rel in rels if rel not in entries])
        return commit


def commit_run(root: Path, run: str, goal: str | None, outcome: str,
               extra_paths: Iterable[str | os.PathLike] = (), *,
               log_rel: str = "state/events.jsonl") -> bytes:
    """Commit the log + `extra_paths` as the closing commit of `run`; return its id.

    Refuses newlines in trailer values and a tracked log that went missing.
    """
    message = run_message(run, goal, outcome).encode()
    return commit_paths(root, [log_rel, *extra_paths], message, log_rel=log_rel)


def outstanding_events(root: Path, log_rel: str) -> list[tuple[str, str | None]]:
    """(kind, correlation id) of each event the log at `root` holds past HEAD's copy of
    it (the log only grows): what a commit of the log would add."""
    import json

    from git_gasp.store.append import committed_size  # noqa: I001 - store under runtime

    data = read_file(root / log_rel)
    out = []
    for line in data[committed_size(root, log_rel):].splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            corr = event.get("correlation_id")
            out.append((str(event.get("kind")), corr if isinstance(corr, str) else None))
    return out


def events_message(events: list[tuple[str, str | None]]) -> bytes:
    """The subject (and body) of a commit of outstanding events no run closes:
    ``gasp: 2 events (goal.created, observation.recorded)``, never a run's subject."""
    kinds: dict[str, int] = {}
    for kind, _corr in events:
        if kind != "state.ops_applied":  # the paired ops: not what the user recorded
            kinds[kind] = kinds.get(kind, 0) + 1
    named = ", ".join(k if n == 1 else f"{k} x{n}" for k, n in kinds.items())
    count = sum(kinds.values()) or len(events)
    return (f"gasp: {count} event{'' if count == 1 else 's'}"
            + (f" ({named})" if named else "") + "\n").encode()
