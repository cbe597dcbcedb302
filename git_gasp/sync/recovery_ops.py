"""`git gasp recovery list | show | apply | drop`: the recovery refs a sync that gave up
pushed (``refs/gasp/recovery/<agent>/<run-or-time>``, `sync.recovery`), on the remote
and in this clone.

A ref is named by its full name, by what follows ``refs/gasp/recovery/`` or by any
trailing part of that (``run_x1``) when only one ref ends so. `show` and `apply` fetch a
ref the clone does not have into the same name here. `apply` merges the ref's commits
into the current branch as a sync merges the remote's (the union merge driver; the
guard's rules on the commits it brings, then a cached check; a conflict is left in
progress for git to finish, or ``git gasp sync --abort``); the next ``git gasp sync``
pushes the result. `drop` deletes the ref here and on the remote, and refuses while it
holds commits the current branch does not (``--force`` drops them anyway).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from git_gasp.base import git
from git_gasp.base.errors import GaspError, UsageError
from git_gasp.store.attributes import log_location
from git_gasp.store.location import is_state_branch
from git_gasp.sync import integrate, sync, validate
from git_gasp.sync import state as sync_state
from git_gasp.sync.recovery import PREFIX
from git_gasp.sync.state import CannotStart

LIST_TIMEOUT_S = 30.0  # of the remote's listing and of a fetch or push


@dataclass
class Ref:
    """One recovery ref: where it is and, when its commit is here, what it holds."""

    name: str  # the full ref name
    sha: str
    local: bool = False
    remote: bool = False
    time: int | None = None  # the commit's committer time (None: not fetched)
    subject: str | None = None
    ahead: int | None = None  # commits the current branch does not have
    local_sha: str | None = None  # this clone's copy (another commit: fetched before this)

    @property
    def short(self) -> str:
        return self.name[len(PREFIX):]

    def to_json(self) -> dict:
        return {"name": self.name, "short": self.short, "commit": self.sha,
                "local": self.local, "remote": self.remote, "time": self.time,
                "subject": self.subject, "commits_not_on_branch": self.ahead}


@dataclass
class Listing:
    """The recovery refs of the clone and its remote (`remote_error`: why the remote
    could not be listed; its refs are then missing)."""

    remote: str
    branch: str | None
    refs: list[Ref] = field(default_factory=list)
    remote_error: str | None = None


def _top(start: Path) -> Path:
    try:
        return git.work_tree_top(start)
    except GaspError:
        raise GaspError("not inside a git work tree: run git gasp recovery in the clone "
                        "that syncs") from None


def _branch(top: Path) -> tuple[str | None, str | None]:
    """(``refs/heads/NAME``, its commit), or (None, HEAD's commit) when detached."""
    proc = git.run(top, "symbolic-ref", "-q", "HEAD", check=False)
    ref = proc.stdout.decode("utf-8", "replace").strip() or None
    return (ref if ref and ref.startswith(sync.HEADS) else None,
            git.resolve_commit(top, "HEAD"))


def _remote(top: Path, remote: str | None) -> str:
    ref, _head = _branch(top)
    if ref is None:
        return remote or "origin"
    return sync.target(top, ref, remote, None)[0]


def _local_refs(top: Path) -> dict[str, str]:
    proc = git.run(top, "for-each-ref", "--format=%(objectname) %(refname)", PREFIX,
                   check=False)
    found = {}
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        sha, _, name = line.partition(" ")
        if name.startswith(PREFIX):
            found[name] = sha
    return found


def _remote_refs(top: Path, remote: str) -> tuple[dict[str, str], str | None]:
    proc = git.run(top, "ls-remote", "--refs", remote, PREFIX + "*", check=False,
                   timeout=LIST_TIMEOUT_S)
    if proc.returncode != 0:
        return {}, sync_state.last_line(proc.stderr.decode("utf-8", "replace"))
    found = {}
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        sha, _, name = line.partition("\t")
        if name.startswith(PREFIX):
            found[name] = sha
    return found, None


def _describe(top: Path, ref: Ref, head: str | None) -> None:
    if not git.ok(top, "cat-file", "-e", f"{ref.sha}^{{commit}}"):
        return
    proc = git.run(top, "log", "-1", "--format=%ct%x00%s", ref.sha, check=False)
    when, _, subject = proc.stdout.decode("utf-8", "replace").strip().partition("\0")
    ref.time = int(when) if when.isdigit() else None
    ref.subject = subject or None
    count = git.run(top, "rev-list", "--count", ref.sha, *(("--not", head) if head else ()),
                    check=False)
    text = count.stdout.decode().strip()
    ref.ahead = int(text) if count.returncode == 0 and text.isdigit() else None


def list_refs(start: Path, remote: str | None = None, *, remote_side: bool = True) -> Listing:
    """The recovery refs here and (unless not `remote_side`) on `remote` (default: the
    branch's upstream remote, else origin), each described when its commit is here."""
    top = _top(start)
    try:
        name, unusable = _remote(top, remote), None
    except UsageError as exc:
        if remote is not None:
            raise
        name, unusable = "origin", str(exc)  # no remote at all: the local refs still list
    ref, head = _branch(top)
    listing = Listing(name, ref[len(sync.HEADS):] if ref else None)
    local = _local_refs(top)
    there, listing.remote_error = (_remote_refs(top, name) if remote_side and not unusable
                                   else ({}, unusable))
    for full in sorted(set(local) | set(there)):
        item = Ref(full, there.get(full) or local[full], local=full in local,
                   remote=full in there, local_sha=local.get(full))
        _describe(top, item, head)  # the remote's value when there is one: what `show` takes
        listing.refs.append(item)
    return listing


def resolve(listing: Listing, given: str) -> Ref:
    """The one ref `given` names: its full name, what follows the prefix, or a unique
    trailing part of that (whole path components)."""
    text = given.strip().strip("/")
    if not text:
        raise UsageError("name a recovery ref (git gasp recovery list shows them)")
    exact = [r for r in listing.refs if text in (r.name, r.short)]
    found = exact or [r for r in listing.refs if r.short.endswith("/" + text)]
    if len(found) == 1:
        return found[0]
    where = f" here or on {listing.remote}" + (
        f" (the remote could not be listed: {listing.remote_error})"
        if listing.remote_error else "")
    if not found:
        raise GaspError(f"no recovery ref named {given!r}{where}: git gasp recovery list "
                        "shows them")
    raise GaspError(f"{given!r} names {len(found)} recovery refs ("
                    + ", ".join(r.short for r in found[:5]) + "): give more of the name")


def fetched(top: Path, listing: Listing, ref: Ref) -> str:
    """`ref`'s commit, fetched into the same name here when the clone lacks it (or holds
    an older value of it); the commit id."""
    if ref.local_sha == ref.sha and git.ok(top, "cat-file", "-e", f"{ref.sha}^{{commit}}"):
        return ref.sha
    if not ref.remote:
        raise GaspError(f"{ref.name} names {ref.sha[:12]}, which this clone does not have")
    proc = git.run(top, "fetch", "--no-tags", "--quiet", listing.remote,
                   f"+{ref.name}:{ref.name}", check=False, timeout=LIST_TIMEOUT_S)
    if proc.returncode != 0:
        raise GaspError(f"cannot fetch {ref.name} from {listing.remote}: "
                        f"{sync_state.last_line(proc.stderr.decode('utf-8', 'replace'))}")
    sha = git.resolve_commit(top, ref.name)
    if sha is None:
        raise GaspError(f"fetching {ref.name} from {listing.remote} left no commit")
    if sha != ref.sha:
        raise GaspError(f"{ref.name} moved on {listing.remote} while it was fetched "
                        f"({ref.sha[:12]} -> {sha[:12]}): run the command again")
    ref.local, ref.local_sha = True, sha
    return sha


# --- show ------------------------------------------------------------------------------

@dataclass
class Shown:
    """What a recovery ref holds beyond the current branch."""

    ref: Ref
    commits: list[tuple[str, int, str]]  # (id, committer time, subject), newest first
    events: list[dict]  # the log lines it adds: {"id", "kind", "line"}
    log_rel: str


def _log_lines(top: Path, rev: str, path: str) -> list[bytes]:
    proc = git.run(top, "cat-file", "blob", f"{rev}:{path}", check=False)
    return proc.stdout.splitlines() if proc.returncode == 0 else []


def _prefix_of(top: Path, agent_root: Path) -> str:
    rel = agent_root.resolve().relative_to(top.resolve()).as_posix()
    return "" if rel == "." else rel + "/"


def show(start: Path, given: str, remote: str | None = None) -> Shown:
    """The commits and log lines recovery ref `given` holds that the branch has not."""
    top = _top(start)
    listing = list_refs(start, remote)
    ref = resolve(listing, given)
    sha = fetched(top, listing, ref)
    _ref, head = _branch(top)
    _describe(top, ref, head)
    proc = git.run(top, "log", "--format=%H%x00%ct%x00%s", sha,
                   *(("--not", head) if head else ()), check=False)
    commits = []
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        cid, when, subject = (line.split("\0") + ["", ""])[:3]
        commits.append((cid, int(when) if when.isdigit() else 0, subject))
    root = sync.agent_root(Path(start), top)
    log_rel = log_location(root)
    path = _prefix_of(top, root) + log_rel
    have = set(_log_lines(top, head, path)) if head else set()
    events = []
    for line in _log_lines(top, sha, path):
        if line in have or not line.strip():
            continue
        try:
            doc = json.loads(line)
        except ValueError:
            doc = {}
        doc = doc if isinstance(doc, dict) else {}
        events.append({"id": doc.get("id"), "kind": doc.get("kind"),
                       "line": line.decode("utf-8", "replace")})
    return Shown(ref, commits, events, log_rel)


# --- apply -----------------------------------------------------------------------------

@dataclass
class Applied:
    """How an apply ended: `status` is applied, already or refused (exit 1), conflict
    (exit 1, the merge left in progress) or cannot-start (exit 5)."""

    status: str
    ref: str | None = None
    commit: str | None = None
    head: str | None = None
    reason: str | None = None
    conflicts: list[str] = field(default_factory=list)
    cleaned: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return {"applied": 0, "already": 0, "cannot-start": 5}.get(self.status, 1)

    def to_json(self) -> dict:
        return {"status": self.status, "ref": self.ref, "commit": self.commit,
                "head": self.head, "reason": self.reason, "conflicts": self.conflicts,
                "cleaned": self.cleaned}


def apply(start: Path, given: str, remote: str | None = None,
          wait: float | None = None) -> Applied:
    """Merge recovery ref `given` into the current branch, validated as a sync's merge is
    (see the module doc); nothing is pushed."""
    out = Applied("cannot-start")
    try:
        with sync_state.session(Path(start)) as s:
            root = sync.agent_root(Path(start), s.top)
            with sync.holding_lease(root, wait):
                out.cleaned = sync_state.clean_up(s)
                branch, orig = sync_state.current_branch(s.top)
                sync_state.refuse_unready(s)
                listing = list_refs(start, remote)
                ref = resolve(listing, given)
                out.ref = ref.name
                sha = out.commit = fetched(s.top, listing, ref)
                _merge_in(s, root, out, branch, orig, sha, log_location(root))
            out.head = git.resolve_commit(s.top, "HEAD")
    except CannotStart as exc:
        out.status, out.reason = "cannot-start", str(exc)
    except integrate.BranchMoved as exc:
        out.status, out.reason = "refused", str(exc)
    return out


def _merge_in(s: sync_state.Session, root: Path, out: Applied, branch: str, orig: str,
              sha: str, log_rel: str) -> None:
    name = out.ref[len(PREFIX):] if out.ref else sha[:12]
    if integrate.is_ancestor(s.top, sha, orig):
        out.status, out.reason = "already", f"{name} is already on {branch[len(sync.HEADS):]}"
        return
    failures = validate.new_commit_failures(s.top, root, log_rel, sha, orig)
    if failures:
        out.status, out.reason = "refused", _refusal(f"{name} ({sha[:12]}) breaks the rules",
                                                     failures)
        return
    s.config = integrate.driver_config(s, root, log_rel)
    s.record("merge", branch, orig, sha)
    why = integrate.merge(s, sha, f"Apply recovery {name} (git gasp recovery apply)")
    if why is not None:
        op = integrate.in_progress(s)
        paths = integrate.conflicted_paths(s) if op else []
        s.forget()
        if not paths:
            _put_back(s, orig)
            out.status, out.reason = "refused", f"merging {name} failed: {why}"
            return
        sync_state.remember_conflict(s, op, orig, sha)
        shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5
                                        else "")
        out.status, out.conflicts = "conflict", paths
        out.reason = (f"merge conflict with {name} in {shown}. Resolve the files, git add "
                      "them and git commit, then git gasp sync (or git gasp sync --abort)")
        return
    s.made = git.resolve_commit(s.top, "HEAD")
    failures = validate.check_failures(root)
    if failures:
        _put_back(s, orig)
        out.status, out.reason = "refused", _refusal(f"the branch with {name} merged is not "
                                                     "conformant", failures)
        return
    s.forget()
    out.status = "applied"


def _refusal(what: str, failures: list[str]) -> str:
    more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
    return f"{what}: {failures[0]}{more}; the branch did not move"


def _put_back(s: sync_state.Session, orig: str) -> None:
    why = integrate.restore(s, orig)
    s.forget()
    if why is not None:
        raise GaspError(f"cannot put the branch back at {orig[:12]} ({why}): git reset "
                        f"--keep {orig[:12]} undoes the merge")


# --- drop ------------------------------------------------------------------------------

def drop(start: Path, given: str, remote: str | None = None, *, force: bool = False,
         local_only: bool = False) -> list[str]:
    """Delete recovery ref `given` here and (unless `local_only`) on the remote; what
    was deleted, one line each. Refused while it holds commits the branch lacks."""
    top = _top(start)
    listing = list_refs(start, remote, remote_side=not local_only)
    ref = resolve(listing, given)
    sha = ref.local_sha if local_only else ref.sha
    if not force:
        sha = sha if local_only else fetched(top, listing, ref)
        _b, head = _branch(top)
        if head is None or not integrate.is_ancestor(top, sha, head):
            _describe(top, ref, head)
            count = f"{ref.ahead} commit(s)" if ref.ahead else "commits"
            raise GaspError(f"{ref.short} holds {count} the current branch does not have: "
                            f"apply it first (git gasp recovery apply {ref.short}) or drop "
                            "it anyway with --force")
    done = []
    if ref.remote and not local_only:
        hooks_off = git.NO_HOOKS if is_state_branch(top) else ()  # the state is ours
        proc = git.run(top, *hooks_off, "push", "--porcelain",
                       f"--force-with-lease={ref.name}:{ref.sha}",
                       listing.remote, f":{ref.name}", check=False, timeout=LIST_TIMEOUT_S)
        if proc.returncode != 0:
            text = (proc.stdout + proc.stderr).decode("utf-8", "replace")
            said = [x[len("remote:"):].strip() for x in text.splitlines()
                    if x.startswith("remote:") and x[len("remote:"):].strip()]
            status = next((x.split("\t")[-1] for x in text.splitlines() if x.startswith("!")),
                          None)
            why = "; ".join(said[:2]) or status or sync_state.last_line(text)
            raise GaspError(f"the remote {listing.remote} did not delete {ref.name} "
                            f"({why.strip()}): it is kept there; its administrator can "
                            f"delete it (git update-ref -d {ref.name})")
        done.append(f"deleted {ref.name} on {listing.remote}")
    if ref.local_sha is not None:
        git.run(top, "update-ref", "-d", ref.name, ref.local_sha)
        done.append(f"deleted {ref.name} here")
    return done


def date_of(when: int | None) -> str:
    """A committer time as a local date (``2026-12-02 01:15``), or ``?``."""
    return "?" if when is None else time.strftime("%Y-%m-%d %H:%M", time.localtime(when))
