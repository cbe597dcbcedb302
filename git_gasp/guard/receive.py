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
``receive_check``. Every pushed commit is scanned for secrets it adds to a state file
(``receive_secrets``).

During pre-receive the pushed objects sit in a quarantine directory git names in the
environment (``GIT_QUARANTINE_PATH``): the walker reads them from there and the rest
from the repository.
"""

from __future__ import annotations

from pathlib import Path

from git_gasp.conformance.history.walk import Walker
from git_gasp.guard.forget_rule import forgotten_fingerprints, only_forgotten
from git_gasp.guard.push import Refusal, Settings, Update, git_run, object_store, reach
from git_gasp.guard.receive_check import check_appended
from git_gasp.guard.receive_secrets import pushed_secrets
from git_gasp.odb.database import ObjectDatabase
from git_gasp.odb.objects import ObjectError
from git_gasp.protocol.appendonly import LOG_PATH

CHECK_BLOB_BUDGET = 256 << 20  # with --check: blobs up to a quarter of it stay in memory


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


def peel(store, sha: bytes) -> bytes | None:
    """The commit `sha` names, through annotated tags; None for a tree or blob (or an
    object that cannot be read: the walk reports a commit it cannot read)."""
    return ObjectDatabase(store).peel(sha)


def check_push(git_dir: Path, updates: list[tuple[str, str, str]], *,
               check: bool = False) -> list[Refusal]:
    """Why the push of `updates` into the repository at `git_dir` must be refused
    (`check`: also checks 1, 5 and 7 on the log lines each update appends)."""
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
    fmt = git_run(git_dir, "rev-parse", "--show-object-format").stdout.strip()
    if fmt != b"sha1":  # the walk reads sha1 objects; fail closed with the reason
        why = (f"the repository stores {fmt.decode(errors='replace') or 'unknown'} objects; "
               "git-gasp reads sha1 repositories only")
        return refusals + [Refusal(u.ref, why) for u in live]
    heads = [u.head for u in live if u.head is not None]
    listed = git_run(git_dir, "rev-list", "--boundary", "--not", "--all", "--not", "--stdin",
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
                               update.head, settings.allow_forget)
            refusals += rewound
            update.refused = update.refused or bool(rewound)
    scanned: set[bytes] = set()
    for update in live:  # the secret rule, on every pushed commit once
        if update.head is not None:
            commits = [c for c in reach(walker, update.head, pushed)[0] if c not in scanned]
            scanned.update(commits)
            refusals += pushed_secrets(ObjectDatabase(store), settings.root, update.ref,
                                       commits)
    if check:
        refusals += check_appended(git_dir, walker, live, pushed)
    return refusals


def _ancestor(git_dir: Path, old: str, new: str) -> bool:
    return git_run(git_dir, "merge-base", "--is-ancestor", old, new).returncode == 0


def _rewound(walker, ref: str, old: bytes | None, new: bytes,
             allow_forget: bool = False) -> list[Refusal]:
    """A non-fast-forward update: each append-only file at OLD must be where NEW keeps
    it (a role's file where NEW's manifest puts that role), starting with OLD's bytes
    — or, with `allow_forget`, with OLD's bytes where NEW's log records forgetting the
    secrets its tokens replace (`forget_rule`)."""
    if old is None:
        return []  # OLD named no commit: no history of files to keep
    objects = walker.objects
    try:
        old_root = objects.subtree(walker.tree_of(old), walker.prefix)
        new_root = objects.subtree(walker.tree_of(new), walker.prefix)
        old_paths = walker.paths_of(old, old_root)
        new_paths = walker.paths_of(new, new_root)
        moves = old_paths.moves(new_paths)
        log = objects.entry_at(new_root, new_paths.log) if new_root is not None else None
        forgotten = forgotten_fingerprints(objects.blob(log.sha)) if log is not None else set()
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
        if not extends and forgotten and allow_forget and only_forgotten(
                objects.blob(entry.sha), objects.blob(kept.sha), forgotten):
            continue  # a `git gasp forget` rewrite the server allows
        if not extends:
            hint = (" (a `git gasp forget` rewrite: the server allows one only with "
                    "gasp.allowForget = true)" if forgotten and not allow_forget else "")
            out.append(Refusal(ref, f"a forced update drops lines {old.decode()[:12]} had "
                               f"(the new history does not start with them){hint}",
                               new.decode(), shown))
    return out


def fix_hint(data: bytes, refusals: list[Refusal]) -> str | None:
    """The line that says how to fix a refused push: the refused commits are in the
    pusher's history, so a revert pushed on top is refused again; dropping or rewriting
    the commits the server does not have (those after the ref's old value) is what
    works. None when no refusal names a commit."""
    olds = {ref: old for old, _new, ref in parse_updates(data)}
    for r in refusals:
        old = olds.get(r.ref)
        if r.commit is None or old is None:
            continue
        if _zero(old):
            return ("git gasp: fix: rewrite the refused commit in your history "
                    "(git rebase -i), keeping every line a committed log had, then push "
                    "again; a git revert leaves the commit in the history")
        return (f"git gasp: fix: drop the commits this remote does not have, then "
                f"re-append their events as new lines and push again: git reset --keep "
                f"{old} (or rewrite them: git rebase -i {old}); a git revert leaves the "
                "refused commit in the history")
    return None


def run_pre_receive(git_dir: Path, data: bytes, *, check: bool = False) -> list[Refusal]:
    """pre-receive's verdict on its stdin `data` (empty: the push may go in)."""
    return check_push(git_dir, parse_updates(data), check=check)
