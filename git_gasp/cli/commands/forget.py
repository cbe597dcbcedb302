"""`git gasp forget PATTERN | --fingerprint F`: rewrite a committed secret out of the
state branch's history (`store.forget`), record the forget, say what the remote and
every clone must do."""

from __future__ import annotations

from pathlib import Path

import click

from git_gasp.base import git
from git_gasp.base.errors import UsageError
from git_gasp.base.ids import new_id
from git_gasp.cli.options import CONTEXT, agent_root, open_state, release_lease
from git_gasp.redact.scan import FINGERPRINT
from git_gasp.runtime.commit import commit_paths
from git_gasp.store.forget import (
    ForgetError,
    drop_old_objects,
    find_secret,
    forget_ops,
    rewrite,
    secret_for_pattern,
)


@click.command("forget", context_settings=CONTEXT)
@click.argument("pattern", required=False)
@click.option("--fingerprint", "fingerprints", multiple=True, metavar="F",
              help="The secret whose fingerprint (kind:hash8, as the guard and check "
                   "print it) is F; repeatable.")
@click.option("--force", is_flag=True,
              help="Rewrite even with uncommitted changes in the state (they are lost), "
                   "an open run, or commits of the upstream this clone lacks.")
def forget(pattern: str | None, fingerprints: tuple[str, ...], force: bool) -> None:
    """Replace a committed secret by its redaction token in every version of the state
    branch; record the forget and print what the remote and each clone must do."""
    if not pattern and not fingerprints:
        raise UsageError("name the secret: git gasp forget PATTERN, or --fingerprint F")
    for fp in fingerprints:
        if not FINGERPRINT.fullmatch(fp):
            raise UsageError(f"--fingerprint {fp!r} is not kind:hash8 (as "
                             "`github_token:1a2b3c4d`)")
    root = Path(agent_root())
    top = git.work_tree_top(root)
    branch = _branch(root)
    state = open_state(write=True)
    try:
        if not force:
            _refuse_unsafe(root, branch, state)
        secrets = {fp: find_secret(root, branch, fp) for fp in fingerprints}
        if pattern:
            fp, secret = secret_for_pattern(pattern)
            secrets[fp] = secret
        refs = [f"refs/heads/{branch}", *_tracking(root, branch)]
        before = _tip(root, branch)
        rewrite(top, refs, secrets)
        if _tip(root, branch) == before:
            raise ForgetError(f"no version of {branch} holds "
                              + ("that secret" if pattern else "those secrets")
                              + "; nothing was rewritten")
        git.run(root, *git.NO_HOOKS, "reset", "-q", "--hard", "HEAD")
        drop_old_objects(top)
    finally:
        release_lease(state)
    names = sorted(secrets)
    state = open_state(write=True, root=root)
    try:
        event = state.apply_ops(forget_ops(new_id("observation"), names))
        message = f"gasp forget: {', '.join(names)}\n".encode()
        commit_paths(root, [state.store.rel], message, log_rel=state.store.rel)
    finally:
        release_lease(state)
    click.echo(_advice(root, branch, names, event.id))


def _branch(root: Path) -> str:
    proc = git.run(root, "symbolic-ref", "-q", "--short", "HEAD", check=False)
    name = proc.stdout.decode("utf-8", "surrogateescape").strip()
    if proc.returncode != 0 or not name:
        raise ForgetError("the state is on no branch (a detached HEAD): check its branch "
                          "out first")
    return name


def _tip(root: Path, branch: str) -> str:
    return git.out(root, "rev-parse", f"refs/heads/{branch}").strip()


def _upstream(root: Path, branch: str) -> str | None:
    proc = git.run(root, "rev-parse", "--abbrev-ref", f"{branch}@{{upstream}}", check=False)
    name = proc.stdout.decode("utf-8", "surrogateescape").strip()
    return name if proc.returncode == 0 and name else None


def _tracking(root: Path, branch: str) -> list[str]:
    """The remote-tracking refs of `branch` (rewritten too: they hold the secret)."""
    refs = git.out(root, "for-each-ref", "--format=%(refname)", "refs/remotes/").split()
    return [r for r in refs if r.endswith("/" + branch)]


def _refuse_unsafe(root: Path, branch: str, state) -> None:
    """ForgetError when rewriting now would lose something (--force rewrites anyway)."""
    dirty = git.out(root, "status", "--porcelain", "--untracked-files=no", "--", ".")
    if dirty.strip():
        raise ForgetError("the state has uncommitted changes: commit them first "
                          "(`git gasp commit-run`), or --force to lose them")
    if state.run is not None:
        raise ForgetError(f"run {state.run.run_id} is open: finish and commit it first, "
                          "or --force")
    upstream = _upstream(root, branch)
    if upstream is not None:
        behind = git.out(root, "rev-list", "--count", f"{branch}..{upstream}").strip()
        if behind != "0":
            raise ForgetError(f"{upstream} has {behind} commit(s) this clone lacks: pull "
                              "them first (`git gasp sync`), or the forced push drops "
                              "them; --force to rewrite anyway")


def _advice(root: Path, branch: str, names: list[str], event_id: str) -> str:
    upstream = _upstream(root, branch)
    remote = upstream.split("/", 1)[0] if upstream else "origin"
    fps = " ".join(f"--fingerprint {fp}" for fp in names)
    return "\n".join([
        f"forgot {', '.join(names)}: every version of {branch} now holds the redaction "
        f"token instead (recorded by {event_id}); this repository's old objects are pruned",
        "the secret was committed: revoke it anyway, a clone made before may keep it",
        "the remote: allow this rewrite (in the server repository: git config "
        "gasp.allowForget true), then",
        f"    git push --force {remote} {branch}",
        "  and drop the old objects there (git reflog expire --expire=now --all && git gc "
        "--prune=now; a hosting service: ask it to)",
        f"every other clone: git fetch {remote}, then in its state worktree",
        f"    git reset --hard {remote}/{branch} && git reflog expire --expire=now --all "
        "&& git gc --prune=now",
        f"  (or, with commits of its own: git gasp forget {fps})",
    ])
