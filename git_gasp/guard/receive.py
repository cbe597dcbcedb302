"""The server's guard (`pre-receive`): check 4's rules on the commits a push brings, and
no protected branch deleted or rewound past log lines.

For every ref update (``OLD NEW REF`` lines on stdin) the new commits only (those
reachable from NEW and from no ref the repository has: ``rev-list --boundary NEW
--not --all``) are checked, each against its parents, by check 4's walker, the old
boundary commits counting as verified. A deletion of a protected branch, or a
non-fast-forward update of one whose append-only files at NEW do not start with
those at OLD, is refused. Protected: the ``gasp.protect`` globs (default
``refs/heads/*``). The agent root is the top of the tree, or ``gasp.root``.

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


@dataclass(frozen=True)
class Refusal:
    """One reason to refuse a push: a ref, the commit and path when known, and why."""

    ref: str
    why: str
    commit: str | None = None
    path: str | None = None

    def line(self) -> str:
        where = " ".join(x for x in (f"commit {self.commit[:12]}" if self.commit else "",
                                     self.path or "") if x)
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


def _git(git_dir: Path, *args: str):
    # the quarantine (GIT_QUARANTINE_PATH, GIT_OBJECT_DIRECTORY, ...) must reach git
    return git.run(git_dir, *args, check=False, inherit_git_env=True)


def _config_all(git_dir: Path, key: str) -> list[str]:
    proc = _git(git_dir, "config", "--get-all", key)
    return proc.stdout.decode("utf-8", "replace").split("\n")[:-1] if proc.returncode == 0 \
        else []


def protected(git_dir: Path, ref: str) -> bool:
    """Whether `ref` matches a ``gasp.protect`` glob (default: every branch)."""
    globs = _config_all(git_dir, "gasp.protect") or ["refs/heads/*"]
    return any(fnmatch.fnmatchcase(ref, g) for g in globs)


def object_store(git_dir: Path):
    """The repository's objects, with the push's quarantine first when there is one."""
    from dulwich.object_store import DiskObjectStore, OverlayObjectStore

    main = DiskObjectStore(str(Path(git.common_dir(git_dir)) / "objects"))
    quarantine = os.environ.get("GIT_QUARANTINE_PATH")
    if quarantine and os.path.isdir(quarantine):
        return OverlayObjectStore([DiskObjectStore(quarantine), main])
    return main


def check_push(git_dir: Path, updates: list[tuple[str, str, str]]) -> list[Refusal]:
    """Why the push of `updates` into the repository at `git_dir` must be refused."""
    from git_gasp.conformance.history_walk import Walker

    roots = _config_all(git_dir, "gasp.root")
    root = os.fsencode(roots[-1].strip("/")) if roots else b""
    store = object_store(git_dir)
    refusals: list[Refusal] = []
    for old, new, ref in updates:
        guarded = protected(git_dir, ref)
        if _zero(new):
            if guarded:
                refusals.append(Refusal(ref, "deleting a protected branch drops its log "
                                        "(gasp.protect)"))
            continue
        listed = _git(git_dir, "rev-list", "--boundary", new, "--not", "--all")
        if listed.returncode != 0:
            refusals.append(Refusal(ref, f"cannot list the pushed commits of {new[:12]}"))
            continue
        boundary = {line[1:].encode() for line in listed.stdout.decode().split()
                    if line.startswith("-")}
        walker = Walker(store, root, frozenset(), LOG_PATH)
        walker.cached = boundary
        walker.walk(new.encode(), set())
        refusals += [Refusal(ref, f.message, f.commit, f.path)
                     for f in walker.result.failures]
        if guarded and not _zero(old) and not _ancestor(git_dir, old, new):
            refusals += _rewound(walker, ref, old.encode(), new.encode())
    return refusals


def _ancestor(git_dir: Path, old: str, new: str) -> bool:
    return _git(git_dir, "merge-base", "--is-ancestor", old, new).returncode == 0


def _rewound(walker, ref: str, old: bytes, new: bytes) -> list[Refusal]:
    """A non-fast-forward update: each append-only file at OLD must be where NEW keeps
    it, starting with OLD's bytes."""
    from git_gasp.conformance.history_objects import ObjectError

    objects = walker.objects
    try:
        old_root = objects.subtree(walker.tree_of(old), walker.prefix)
        new_root = objects.subtree(walker.tree_of(new), walker.prefix)
        files = [] if old_root is None else list(
            objects.append_only_files(old_root, walker.paths_of(old, old_root)))
    except ObjectError as exc:
        return [Refusal(ref, f"cannot read the update: {exc}", new.decode())]
    out = []
    for path, entry in files:
        shown = walker.full_path(path)
        kept = objects.entry_at(new_root, path)
        if kept is None:
            out.append(Refusal(ref, "a forced update drops this append-only file",
                               new.decode(), shown))
            continue
        if kept.sha == entry.sha:
            continue
        if not objects.blob(kept.sha).startswith(objects.blob(entry.sha)):
            out.append(Refusal(ref, f"a forced update drops lines {old.decode()[:12]} had "
                               "(the new history does not start with them)", new.decode(),
                               shown))
    return out


def run_pre_receive(git_dir: Path, data: bytes) -> list[Refusal]:
    """pre-receive's verdict on its stdin `data` (empty: the push may go in)."""
    return check_push(git_dir, parse_updates(data))
