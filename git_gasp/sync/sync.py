"""`git gasp sync`: fetch, integrate, validate, push; retry with backoff; recover.

One attempt fetches the remote branch, integrates it into the local branch (a merge
through the union merge driver, or with `rebase` a replay of the local commits, the
driver resolving the append-only files), validates the result (`sync.validate`: the
rules the remote's pre-receive applies to the new commits, then a cached check) and
pushes it without force. A fast-forward to the remote gets the same checks before the
branch moves. A push the remote rejects because it moved (non-fast-forward, a ref
lock race, the remote unreachable) puts the branch back and tries again after a
jittered exponential wait (`sync.backoff`) until the `max_wait` budget of waits is
spent (or, when given, `attempts` attempts were made): a lost race is retried on
time, not on a count. Giving up pushes the local work to a recovery ref
(`sync.recovery`). A conflict is not a race: the sync stops at once, pushes
nothing, and leaves the merge or rebase in progress for git's own commands to finish
(`Options.abort`, ``sync --abort``, aborts it). On every other way out but success
the branch, index and work tree are as they were, unless a commit was made on the
branch during the sync (it is kept, the branch left where it is); a killed sync is
cleaned up by the next one (`sync.state`). The agent's lease is held from
before the clean-tree check to the end, so no writer appends to the log under a
merge (`holding_lease`).

Exit codes (`EXIT`): 0 synced or nothing to do (or the conflicted sync aborted), 1
refused (the result breaks the rules, or the remote's hook refused it; nothing
pushed), stopped (the branch moved during the sync) or in conflict (the merge or
rebase left in progress), 4 gave up (the local work is on the recovery ref), 5 cannot start
(dirty tree, detached HEAD, an operation in progress, the lease held, another sync
running: nothing changed), 6 gave up and the recovery ref could not be pushed either
(the work is only local). 2 is a usage error
and 3 an internal error, as for every command.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from git_gasp.base import git
from git_gasp.base.errors import GaspError, UsageError
from git_gasp.store.attributes import log_location
from git_gasp.store.joining import configured_remote
from git_gasp.store.lease import Lease, LeaseError, LeaseHeld
from git_gasp.store.lease_wait import take
from git_gasp.store.location import find_root, is_state_branch
from git_gasp.sync import integrate, recovery, validate
from git_gasp.sync import state as sync_state
from git_gasp.sync.backoff import DEFAULT_MAX_WAIT_S, Backoff
from git_gasp.sync.state import CannotStart, Session

EXIT = {"pushed": 0, "up-to-date": 0, "fast-forwarded": 0, "aborted": 0, "refused": 1,
        "moved": 1, "conflict": 1, "gave-up": 4, "cannot-start": 5, "stranded": 6}
HEADS = "refs/heads/"


@dataclass
class Options:
    """What to sync and how (the command line's options)."""

    remote: str | None = None
    branch: str | None = None
    rebase: bool = False
    attempts: int | None = None  # None: until the max_wait budget is spent
    max_wait: float = DEFAULT_MAX_WAIT_S
    since: str | None = None
    timeout: float | None = None  # of each fetch and push, seconds
    wait: float | None = None  # for a held lease, seconds (None: refuse at once)
    abort: bool = False  # abort the merge or rebase a conflicted sync left instead
    keep_conflict: bool = True  # leave a conflict in progress (False: put the branch back)


@dataclass
class Outcome:
    """What a sync did (`to_json` is the `--json` report)."""

    status: str = "cannot-start"
    remote: str | None = None
    branch: str | None = None  # the remote branch
    local_branch: str | None = None
    mode: str = "merge"
    attempts: int = 0
    waits: list[float] = field(default_factory=list)
    local: str | None = None  # the branch's commit when the sync started
    remote_head: str | None = None  # the remote branch at the last fetch
    pushed: str | None = None
    head: str | None = None  # the branch's commit when the sync ended
    recovery_ref: str | None = None
    reason: str | None = None
    cleaned: list[str] = field(default_factory=list)  # what a killed sync left, undone
    conflicts: list[str] = field(default_factory=list)  # the paths a conflict stopped on

    @property
    def exit_code(self) -> int:
        return EXIT[self.status]

    @property
    def retries(self) -> int:
        return max(0, self.attempts - 1)

    def to_json(self) -> dict:
        data = asdict(self)
        data.update(exit_code=self.exit_code, retries=self.retries,
                    waited_s=round(sum(self.waits), 3))
        return data

    def line(self) -> str:
        """One line for the user."""
        where = f"{self.remote}/{self.branch}" if self.remote else "the remote"
        tries = (f" ({self.attempts} attempts, {self.retries} "
                 f"retr{'y' if self.retries == 1 else 'ies'}, waited {sum(self.waits):.1f} s)"
                 if self.attempts > 1 else "")
        if self.status == "up-to-date":
            return f"{self.local_branch} is up to date with {where}"
        if self.status == "fast-forwarded":
            return f"fast-forwarded {self.local_branch} to {where} ({_short(self.head)})"
        if self.status == "pushed":
            return f"pushed {_short(self.pushed)} to {where} ({self.mode}){tries}"
        if self.status == "refused":
            return f"sync refused: {self.reason}; nothing pushed, the branch is as it was"
        if self.status == "moved":
            return f"sync stopped: {self.reason}"
        if self.status == "conflict":
            return f"sync stopped: {self.reason}"
        if self.status == "aborted":
            return f"aborted the {self.mode} a conflicted sync left; {self.local_branch} is " \
                   f"back at {_short(self.head)}"
        if self.status == "gave-up":
            return (f"sync gave up{tries}: {self.reason}; the local work is on "
                    f"{self.recovery_ref} at {self.remote}, the branch is as it was")
        if self.status == "stranded":
            return f"sync gave up{tries}: {self.reason}"
        return f"cannot sync: {self.reason}"


def _short(sha: str | None) -> str:
    return (sha or "")[:12]


def agent_root(start: Path, top: Path) -> Path:
    """The agent root for `start`, as every command finds it (`store.location`: the
    configured state, else the nearest GASP manifest up), else the work tree top `top`."""
    found = find_root(start)
    return Path(found) if found is not None else top


def target(top: Path, ref: str, remote: str | None, branch: str | None) -> tuple[str, str]:
    """(remote, remote branch): the given ones, else (for a state branch) the remote
    ``gasp.remote`` names, else the branch's upstream, else ``origin``; the branch's
    upstream branch on that remote, else the same name."""
    name = ref[len(HEADS):]
    up_remote = git.config_get(top, f"branch.{name}.remote")
    up_merge = git.config_get(top, f"branch.{name}.merge")
    if remote is None and is_state_branch(top):
        remote = configured_remote(top)  # gasp.remote: there only, never origin instead
    if remote is None:
        remote = up_remote if up_remote and up_remote != "." else "origin"
    if branch is None:
        branch = up_merge[len(HEADS):] if (up_merge and up_merge.startswith(HEADS)
                                          and remote == up_remote) else name
    branch = branch[len(HEADS):] if branch.startswith(HEADS) else branch
    if remote.startswith("-") or not git.ok(top, "check-ref-format", HEADS + branch):
        raise UsageError(f"{remote if remote.startswith('-') else branch!r}: not a usable "
                         "remote or branch name")
    if git.config_get(top, f"remote.{remote}.url") is None and not _looks_like_url(remote):
        raise UsageError(f"no remote named {remote!r}: add it (git remote add {remote} URL) "
                         "or name one: git gasp sync REMOTE [BRANCH]")
    return remote, branch


def _looks_like_url(remote: str) -> bool:
    return "/" in remote or ":" in remote or Path(remote).exists()


@contextlib.contextmanager
def holding_lease(root: Path, wait_s: float | None = None) -> Iterator[None]:
    """Hold the agent's lease while the work tree changes, so no other process appends
    to the log meanwhile (a writer started now waits for it or is refused). A held lease
    is waited for up to `wait_s` seconds (None: refused at once). This worker's lease
    kept between its commands (an open run, pid 0) is taken under this process and kept
    again afterwards; one this very process holds (an agent that embeds sync) is used."""
    lease = Lease(root)
    try:
        current = lease.read()
    except LeaseError as exc:
        raise CannotStart(str(exc)) from None
    if current is not None and lease.by_this_process(current) and not current.expired():
        yield
        return
    try:
        take(lease, wait_s)
    except LeaseHeld as exc:
        raise CannotStart(str(exc) if wait_s else f"{exc}: a writer is appending to the "
                          "log; sync when it is done") from None
    except LeaseError as exc:
        raise CannotStart(str(exc)) from None
    try:
        yield
    finally:
        lease.settle()


def sync(start: Path, opts: Options, *, rng: random.Random | None = None,
         sleep: Callable[[float], None] = time.sleep) -> Outcome:
    """Sync the branch checked out at `start` with its remote; see the module doc."""
    if opts.attempts is not None and opts.attempts < 1:
        raise UsageError(f"--attempts must be at least 1, not {opts.attempts}")
    if opts.max_wait < 0:
        raise UsageError(f"--max-wait must not be negative, not {opts.max_wait}")
    out = Outcome(mode="rebase" if opts.rebase else "merge")
    try:
        with sync_state.session(Path(start)) as s:
            root = agent_root(Path(start), s.top)
            # the lease first: from the clean-tree check to the push no writer appends
            with holding_lease(root, opts.wait):
                if opts.abort:
                    _abort(s, out)
                    return out
                out.cleaned = sync_state.clean_up(s)
                ref, head = sync_state.current_branch(s.top)
                out.local_branch, out.local = ref[len(HEADS):], head
                sync_state.refuse_unready(s)
                out.remote, out.branch = target(s.top, ref, opts.remote, opts.branch)
                _attempts(s, root, out, opts, Backoff(opts.max_wait, rng=rng or random.Random()),
                          sleep)
                if out.exit_code == 0:
                    _track(s.top, out)
            out.head = git.resolve_commit(s.top, "HEAD")
    except CannotStart as exc:
        out.status, out.reason = "cannot-start", str(exc)
    except integrate.BranchMoved as exc:
        out.status, out.reason = "moved", str(exc)
        out.head = git.resolve_commit(Path(start), "HEAD")
    return out


def _track(top: Path, out: Outcome) -> None:
    """After the first sync of a branch with no upstream, make the remote's branch its
    upstream (as ``git push -u`` does), so `status` and git show how far apart they are;
    a URL rather than a remote's name, or an upstream already set, is left alone."""
    name = out.local_branch
    if not name or git.config_get(top, f"branch.{name}.remote") is not None or \
            git.config_get(top, f"remote.{out.remote}.url") is None:
        return
    git.config_set_local(top, f"branch.{name}.remote", out.remote)
    git.config_set_local(top, f"branch.{name}.merge", HEADS + out.branch)


def _attempts(s: Session, root: Path, out: Outcome, opts: Options, backoff: Backoff,
              sleep: Callable[[float], None]) -> None:
    orig = out.local
    log_rel = log_location(root)
    s.config = integrate.driver_config(s, root, log_rel)
    out.waits = backoff.waits
    took = 0.0
    # no wait budget and no count: one attempt (retrying at once forever is no budget)
    limit = opts.attempts if opts.attempts is not None or opts.max_wait > 0 else 1
    while limit is None or out.attempts < limit:
        if out.attempts:
            wait = backoff.next_wait(took)
            if wait is None:
                out.reason = f"{out.reason} (the --max-wait budget of {opts.max_wait:g} s " \
                             "is spent)"
                break
            sleep(wait)
        out.attempts += 1
        began = time.monotonic()
        try:
            done = _attempt(s, root, out, opts, orig, log_rel)
        except BaseException:
            with contextlib.suppress(integrate.BranchMoved):  # a commit on it is kept
                integrate.restore(s, orig)  # an unexpected error: the branch as it was
            s.forget()
            raise
        if done:
            return
        took = time.monotonic() - began
    _recover(s, root, out, orig, opts.timeout)


def _attempt(s: Session, root: Path, out: Outcome, opts: Options, orig: str,
             log_rel: str) -> bool:
    """One fetch-integrate-validate-push; True when the sync is finished."""
    s.made = None
    remote_sha, error = integrate.fetch(s, out.remote, out.branch, opts.timeout)
    if error is not None:
        out.reason = error
        return False
    out.remote_head = remote_sha
    if remote_sha == orig:
        out.status = "up-to-date"
        return True
    if remote_sha is not None and integrate.is_ancestor(s.top, orig, remote_sha):
        return _fast_forward(s, root, out, opts, orig, remote_sha, log_rel)
    result = orig
    if remote_sha is not None and not integrate.is_ancestor(s.top, remote_sha, orig):
        s.record(out.mode, HEADS + out.local_branch, orig, remote_sha)
        why = (integrate.rebase(s, remote_sha) if opts.rebase else integrate.merge(
            s, remote_sha, f"Merge {out.remote}/{out.branch} into {out.local_branch} "
            "(git gasp sync)"))
        if why is not None:
            return _stopped(s, out, orig, remote_sha, why, opts.keep_conflict)
        result = git.resolve_commit(s.top, "HEAD") or orig
    s.made = result  # what a put-back may undo: never a commit made meanwhile
    failures = validate.new_commit_failures(s.top, root, log_rel, result, remote_sha) or \
        validate.check_failures(root, opts.since)
    if failures:
        _put_back(s, orig)
        more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
        out.status, out.reason = "refused", failures[0] + more
        return True
    if integrate.remote_moved(s, out.remote, out.branch, remote_sha, opts.timeout):
        _put_back(s, orig)  # lost already: the push would run the remote's hook to fail
        out.reason = f"{out.remote}/{out.branch} moved during the attempt"
        return False
    pushed = integrate.push(s, out.remote, result, HEADS + out.branch, opts.timeout)
    if pushed.ok:
        s.forget()
        out.status, out.pushed = "pushed", result
        return True
    _put_back(s, orig)
    out.reason = pushed.why
    if not pushed.retry:
        out.status, out.reason = "refused", f"the remote refused the push: {pushed.why}"
        return True
    return False


def _fast_forward(s: Session, root: Path, out: Outcome, opts: Options, orig: str,
                  remote_sha: str, log_rel: str) -> bool:
    """Take the remote's commits when they extend the branch, after the checks a merge
    gets: check 4's rules on the commits it brings before anything moves, then the
    cached check of the result (the branch put back when it fails)."""
    failures = validate.new_commit_failures(s.top, root, log_rel, remote_sha, orig)
    if failures:
        out.status, out.reason = "refused", _refusal(
            f"{out.remote}/{out.branch} ({remote_sha[:12]}) breaks the rules", failures)
        return True
    s.record("fast-forward", HEADS + out.local_branch, orig, remote_sha)
    why = integrate.fast_forward(s, remote_sha)
    s.forget()
    if why is not None:
        raise CannotStart(f"cannot fast-forward to {remote_sha[:12]}: {why}")
    s.made = remote_sha
    failures = validate.check_failures(root, opts.since)
    if failures:
        _put_back(s, orig)
        out.status, out.reason = "refused", _refusal(
            f"{out.remote}/{out.branch} ({remote_sha[:12]}) is not conformant", failures)
        return True
    out.status = "fast-forwarded"
    return True


def _refusal(what: str, failures: list[str]) -> str:
    more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
    return f"{what}: {failures[0]}{more}; the branch did not move"


def _stopped(s: Session, out: Outcome, orig: str, remote_sha: str, why: str,
             keep: bool) -> bool:
    """A merge or rebase that git could not finish: a conflict is left in progress for
    the user (nothing pushed, never retried: it would conflict again); anything else is
    put back and refused."""
    op = integrate.in_progress(s)
    paths = integrate.conflicted_paths(s) if op else []
    if not paths:
        s.forget()
        _put_back(s, orig)
        out.status, out.reason = "refused", f"{out.mode} with {out.remote}/{out.branch} " \
                                            f"failed: {why}; nothing pushed"
        return True
    out.status, out.conflicts = "conflict", paths
    shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
    if not keep:  # an agent's hook: never leave a merge in the agent's work tree
        integrate.abort(s, op)
        _put_back(s, orig)
        out.reason = (f"{op} conflict with {out.remote}/{out.branch} in {shown}; nothing "
                      "was pushed, the branch is as it was: run git gasp sync to resolve it")
        return True
    s.forget()  # a conflict left on purpose: the next sync must not abort it
    sync_state.remember_conflict(s, op, orig, remote_sha)
    finish = ("git add them and git commit" if op == "merge"
              else "git add them and git rebase --continue")
    out.reason = (f"{op} conflict with {out.remote}/{out.branch} in {shown}; nothing was "
                  f"pushed. Resolve the files, {finish}, then git gasp sync again "
                  f"(or git gasp sync --abort)")
    return True


def _abort(s: Session, out: Outcome) -> None:
    """``sync --abort``: abort the merge or rebase a conflicted sync left."""
    op = integrate.in_progress(s)
    left = sync_state.left_conflict(s)
    if op is None:
        sync_state.forget_conflict(s)
        raise CannotStart("no merge or rebase is in progress: nothing to abort")
    if left is None or left.get("op") != op:
        raise CannotStart(f"the {op} in progress was not left by git gasp sync: "
                          f"git {op} --abort ends it")
    why = integrate.abort(s, op)
    if why is not None:
        raise CannotStart(f"cannot abort the {op}: {why}; git {op} --abort")
    sync_state.forget_conflict(s)
    out.status, out.mode = "aborted", op
    out.head = git.resolve_commit(s.top, "HEAD")
    ref = git.run(s.top, "symbolic-ref", "-q", "--short", "HEAD", check=False)
    out.local_branch = ref.stdout.decode("utf-8", "replace").strip() or None


def _put_back(s: Session, orig: str) -> None:
    try:
        why = integrate.restore(s, orig)
    except integrate.BranchMoved:
        s.forget()
        raise
    if why is not None:
        raise GaspError(f"cannot put the branch back at {orig[:12]} ({why}); the sync's "
                        f"result is checked out: git reset --keep {orig[:12]} undoes it")
    s.forget()


def _recover(s: Session, root: Path, out: Outcome, orig: str, timeout: float | None) -> None:
    """Give up: push the local work to a recovery ref (never forced)."""
    base = out.remote_head or git.resolve_commit(s.top, f"refs/remotes/{out.remote}/"
                                                        f"{out.branch}")
    name = recovery.recovery_ref(root, s.top, orig, base)
    pushed = integrate.push(s, out.remote, orig, name, timeout)
    if not pushed.ok and any(w in pushed.why for w in ("non-fast-forward", "fetch first")):
        name = f"{name}-{recovery.utc_stamp()}"
        pushed = integrate.push(s, out.remote, orig, name, timeout)
    out.reason = out.reason or "the push kept being rejected"
    if pushed.ok:
        out.status, out.recovery_ref = "gave-up", name
    else:
        out.status = "stranded"
        out.reason = (f"{out.reason}; the local work could not be pushed to {name} either "
                      f"({pushed.why}): it is only on the local branch")
