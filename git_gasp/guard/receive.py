"""The server's guard (`pre-receive`): check 4's rules on the commits a push brings,
no protected branch deleted or rewound past log lines, and (``--check``) checks 1, 5
and 7 on the log lines the push appends.

For every ref update (``OLD NEW REF`` lines on stdin) the new commits only (those
reachable from NEW and from no ref the repository has: one ``rev-list --boundary
NEW... --not --all`` for the whole push) are checked, each against its parents, by
check 4's walker, the old boundary commits counting as verified. An annotated tag is
peeled to its commit (a tag of a tree or blob brings no commit to check). A deletion
of a protected branch, or a non-fast-forward update of one whose append-only files
at NEW do not start with those at OLD (a file the manifest moves is looked for where
NEW's manifest puts it), is refused. Protected: the ``gasp.protect`` globs (default
``refs/heads/*``). The agent root is the top of the tree, or ``gasp.root``. With
`check`, each update check 4 accepts has its appended log lines judged by
``receive_check``.

During pre-receive the pushed objects sit in a quarantine directory git names in the
environment (``GIT_QUARANTINE_PATH``): the walker reads them from there and the rest
from the repository.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path

from git_gasp.base import git
from git_gasp.protocol.appendonly import LOG_PATH

DEFAULT_PROTECT = "refs/heads/*"
CHECK_BLOB_BUDGET = 256 << 20  # with --check: blobs up to a quarter of it stay in memory


@dataclass(frozen=True)
class Refusal:
    """One reason to refuse a push: a ref, the commit, path and line when known, and why."""

    ref: str
    why: str
    commit: str | None = None
    path: str | None = None
    lineno: int | None = None

    def line(self) -> str:
        """The one line printed for it."""
        where_path = self.path if self.path is None or self.lineno is None \
            else f"{self.path}:{self.lineno}"
        where = " ".join(x for x in (f"commit {self.commit[:12]}" if self.commit else "",
                                     where_path or "") if x)
        return f"git gasp: refused {self.ref}: " + (f"{where}: " if where else "") + self.why


def parse_updates(data: bytes) -> list[tuple[str, str, str]]:
    """The (old, new, ref) updates of pre-receive's stdin (blank lines skipped)."""
    out = []
    for line in data.decode("utf-8", "surrogateescape").splitlines():
        parts = line.split()
        if len(parts) == 3:
            out.append((parts[0], parts[1], parts[2]))
    return out


def _zero(sha: str) -> bool:
    return set(sha) == {"0"}


def _git(git_dir: Path, *args: str, input: bytes | None = None):
    # the quarantine (GIT_QUARANTINE_PATH, GIT_OBJECT_DIRECTORY, ...) must reach git
    return git.run(git_dir, *args, check=False, inherit_git_env=True, input=input)


@dataclass
class Settings:
    """The repository's ``gasp.protect`` globs and ``gasp.root`` (read once a push)."""

    protect: list[str]
    root: bytes

    @classmethod
    def read(cls, git_dir: Path) -> Settings:
        proc = _git(git_dir, "config", "-z", "--get-regexp", r"^gasp\.(protect|root)$")
        values: dict[str, list[str]] = {"gasp.protect": [], "gasp.root": []}
        if proc.returncode == 0:
            for item in proc.stdout.decode("utf-8", "surrogateescape").split("\0"):
                key, _, value = item.partition("\n")
                if key in values:
                    values[key].append(value)
        roots = values["gasp.root"]
        return cls(values["gasp.protect"] or [DEFAULT_PROTECT],
                   os.fsencode(roots[-1].strip("/")) if roots else b"")

    def protected(self, ref: str) -> bool:
        return any(fnmatch.fnmatchcase(ref, g) for g in self.protect)


def protected(git_dir: Path, ref: str) -> bool:
    """Whether `ref` matches a ``gasp.protect`` glob (default: every branch)."""
    return Settings.read(git_dir).protected(ref)


def object_store(git_dir: Path):
    """The repository's objects, with the push's quarantine first when there is one."""
    from git_gasp.odb.database import ObjectDatabase

    quarantine = os.environ.get("GIT_QUARANTINE_PATH")
    return ObjectDatabase.open(str(Path(git.common_dir(git_dir)) / "objects"),
                               quarantine if quarantine and os.path.isdir(quarantine) else None
                               ).store


def peel(store, sha: bytes) -> bytes | None:
    """The commit `sha` names, through annotated tags; None for a tree or blob (or an
    object that cannot be read: the walk reports a commit it cannot read)."""
    from git_gasp.odb.database import ObjectDatabase

    return ObjectDatabase(store).peel(sha)


@dataclass
class Update:
    """One ref update of the push, its objects peeled to commits."""

    old: str
    new: str
    ref: str
    head: bytes | None  # NEW's commit (None: NEW names no commit)
    guarded: bool
    refused: bool = False  # check 4 (or the protection) refused it


def check_push(git_dir: Path, updates: list[tuple[str, str, str]], *,
               check: bool = False) -> list[Refusal]:
    """Why the push of `updates` into the repository at `git_dir` must be refused
    (`check`: also checks 1, 5 and 7 on the log lines each update appends)."""
    from git_gasp.conformance.history.walk import Walker

    settings = Settings.read(git_dir)
    store = object_store(git_dir)
    refusals: list[Refusal] = []
    live: list[Update] = []
    for old, new, ref in updates:
        guarded = settings.protected(ref)
        if _zero(new):
            if guarded:
                refusals.append(Refusal(ref, "deleting a protected branch drops its log "
                                        "(gasp.protect)"))
            continue
        live.append(Update(old, new, ref, peel(store, new.encode()), guarded))
    if not live:
        return refusals
    heads = [u.head for u in live if u.head is not None]
    listed = _git(git_dir, "rev-list", "--boundary", "--not", "--all", "--not", "--stdin",
                  input=b"".join(h + b"\n" for h in dict.fromkeys(heads)))
    if listed.returncode != 0:
        return refusals + [Refusal(u.ref, f"cannot list the pushed commits of {u.new[:12]}")
                           for u in live]
    shas = listed.stdout.split()
    boundary = {sha[1:] for sha in shas if sha.startswith(b"-")}
    pushed = {sha for sha in shas if not sha.startswith(b"-")}
    walker = Walker(store, settings.root, frozenset(), LOG_PATH)
    walker.cached = boundary
    if check:  # the logs the walk reads are read again by the checks: keep them
        walker.objects.recent_budget = CHECK_BLOB_BUDGET
    for update in live:
        if update.head is None:
            if update.guarded and not _zero(update.old):
                update.refused = True
                refusals.append(Refusal(update.ref, f"{update.new[:12]} names no commit: a "
                                        "protected ref keeps its history (gasp.protect)"))
            continue
        before = len(walker.result.failures)
        walker.walk(update.head, set())
        found = walker.result.failures[before:]
        refusals += [Refusal(update.ref, f.message, f.commit, f.path, f.line) for f in found]
        update.refused = bool(found) or update.head in walker.bad
        if update.guarded and not _zero(update.old) and not (
                update.old.encode() in reach(walker, update.head, pushed)[1]
                or _ancestor(git_dir, update.old, update.new)):
            rewound = _rewound(walker, update.ref, peel(store, update.old.encode()),
                               update.head)
            refusals += rewound
            update.refused = update.refused or bool(rewound)
    if check:
        from git_gasp.guard.receive_check import check_appended

        refusals += check_appended(git_dir, walker, live, pushed)
    return refusals


def reach(walker, head: bytes, pushed: set[bytes]) -> tuple[list[bytes], set[bytes]]:
    """The pushed commits reachable from `head` (parents before children) and the
    commits already in the repository that are their parents (from the walk's reads)."""
    order: list[bytes] = []
    base: set[bytes] = set()
    if head not in pushed:
        return order, base
    seen = {head}
    stack: list[tuple[bytes, bool]] = [(head, False)]
    while stack:
        sha, expanded = stack.pop()
        if expanded:
            order.append(sha)
            continue
        stack.append((sha, True))
        info = walker.info.get(sha)
        for parent in reversed(info.parents) if info is not None and \
                not isinstance(info, str) else ():
            if parent not in pushed:
                base.add(parent)
            elif parent not in seen:
                seen.add(parent)
                stack.append((parent, False))
    return order, base


def _ancestor(git_dir: Path, old: str, new: str) -> bool:
    return _git(git_dir, "merge-base", "--is-ancestor", old, new).returncode == 0


def _rewound(walker, ref: str, old: bytes | None, new: bytes) -> list[Refusal]:
    """A non-fast-forward update: each append-only file at OLD must be where NEW keeps
    it (a role's file where NEW's manifest puts that role), starting with OLD's bytes."""
    from git_gasp.odb.objects import ObjectError

    if old is None:
        return []  # OLD named no commit: no history of files to keep
    objects = walker.objects
    try:
        old_root = objects.subtree(walker.tree_of(old), walker.prefix)
        new_root = objects.subtree(walker.tree_of(new), walker.prefix)
        old_paths = walker.paths_of(old, old_root)
        moves = old_paths.moves(walker.paths_of(new, new_root))
        files = [] if old_root is None else list(
            objects.append_only_files(old_root, old_paths))
    except ObjectError as exc:
        return [Refusal(ref, f"cannot read the update: {exc}", new.decode())]
    out = []
    for path, entry in files:
        shown = walker.full_path(path)
        kept = objects.entry_at(new_root, path)
        if kept is None and path in moves:
            kept = objects.entry_at(new_root, moves[path][1])
            shown = walker.full_path(moves[path][1])
        if kept is None:
            out.append(Refusal(ref, "a forced update drops this append-only file",
                               new.decode(), shown))
            continue
        if kept.sha == entry.sha:
            continue
        try:
            extends = objects.blob(kept.sha).startswith(objects.blob(entry.sha))
        except ObjectError as exc:
            out.append(Refusal(ref, f"cannot read the update: {exc}", new.decode(), shown))
            continue
        if not extends:
            out.append(Refusal(ref, f"a forced update drops lines {old.decode()[:12]} had "
                               "(the new history does not start with them)", new.decode(),
                               shown))
    return out


def run_pre_receive(git_dir: Path, data: bytes, *, check: bool = False) -> list[Refusal]:
    """pre-receive's verdict on its stdin `data` (empty: the push may go in)."""
    return check_push(git_dir, parse_updates(data), check=check)
