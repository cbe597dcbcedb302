"""The commits made in the project while a session runs: the patches the proxy records.

An agent behind the proxy (Aider, say) commits by itself, never through a tool call the
model asked for, so the proxy looks at the project's HEAD as the session goes and pins
each new commit as a patch. git-gasp's own boundary commits (a ``Run-Id:`` trailer) are
not the agent's work and are left out.
"""

from __future__ import annotations

from git_gasp.adapters.lifting import Lifted
from git_gasp.base import git
from git_gasp.base.errors import GaspError

RULE = "proxy-commit-patch"
MAX_NEW = 200  # commits pinned at one look (a rebase onto a long branch is not the agent's)


def head(cwd: str) -> str | None:
    """The project's HEAD commit, or None (no repository, no commit yet)."""
    try:
        return git.resolve_commit(cwd, "HEAD")
    except (GaspError, OSError):
        return None


def new_commits(cwd: str, since: str | None
                ) -> tuple[str | None, list[tuple[str, str, list[str]]]]:
    """HEAD now, and (sha, subject, files) of each commit on it since `since` (None:
    none, the session saw no HEAD to start from), oldest first, boundary commits left
    out."""
    now = head(cwd)
    if since is None or now is None or now == since:
        return now, []
    try:
        shas = git.out(cwd, "rev-list", "--reverse", f"--max-count={MAX_NEW}",
                       f"{since}..{now}").split()
    except (GaspError, OSError):
        return now, []
    out = []
    for sha in shas:
        try:
            text = git.out(cwd, "show", "--no-renames", "--name-only",
                           "--format=%s%n%(trailers:key=Run-Id,valueonly)%n--", sha)
        except (GaspError, OSError):
            continue
        top, _, names = text.partition("\n--\n")
        subject, _, run = top.partition("\n")
        if run.strip():
            continue  # a git-gasp boundary commit
        out.append((sha, subject, [n for n in names.splitlines() if n]))
    return now, out


def patch_item(sha: str, subject: str, files: list[str], after: str) -> Lifted:
    """The patch of commit `sha`, recorded right after record `after` (its model call)."""
    return Lifted(RULE, "patch", f"patch:{sha}", after, {
        "title": subject or f"commit {sha[:12]}", "commit": sha, "files": files,
        "edits": [], "goal": None, "addresses": [], "validated_by": None})
