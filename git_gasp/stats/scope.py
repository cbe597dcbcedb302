"""What a `stats` or `report` argument names: the revision whose tree is counted and,
for a range (``A..B``) or a date (``--since``), the commits in it."""

from __future__ import annotations

from dataclasses import dataclass

from git_gasp.base import git
from git_gasp.base.errors import UsageError


@dataclass
class Scope:
    """`tip`: the commit whose tree is counted; `commits`: the range's commits (by id,
    their committer time in seconds), None without a range; `since_ms` for a date."""

    tip: str
    label: str
    commits: dict[str, int] | None = None
    since_ms: int | None = None
    base: str | None = None


def _commit(cwd: str, rev: str) -> str:
    sha = git.resolve_commit(cwd, rev) if rev and not rev.startswith("-") else None
    if sha is None:
        shown = rev if len(rev) <= 60 else rev[:60] + "…"
        raise UsageError(f"unknown revision {shown!r}")
    return sha


def _log(cwd: str, *args: str) -> dict[str, int]:
    data = git.run(cwd, "log", "--format=%H %ct", *args).stdout.decode("ascii", "replace")
    out = {}
    for line in data.splitlines():
        sha, _, when = line.partition(" ")
        out[sha] = int(when) if when.isdigit() else 0
    return out


def resolve(cwd: str, spec: str | None, since_ms: int | None = None, *,
            range_only: bool = False) -> Scope:
    """The scope `spec` names: ``REV`` (its tree), ``A..B`` (B's tree, the commits of B
    not in A; an empty side is HEAD) or nothing (HEAD); `since_ms`: the commits of the
    tip made since then. UsageError for a revision git does not know, or for anything
    but a range when `range_only`."""
    if range_only and (spec is None or ".." not in spec):
        raise UsageError(f"{spec!r}: name a range, BASE..HEAD")
    if spec is not None and "..." in spec:
        raise UsageError(f"{spec!r}: name a range as A..B (not A...B)")
    if spec is not None and ".." in spec:
        if since_ms is not None:
            raise UsageError("give a range or --since, not both")
        left, _, right = spec.partition("..")
        base, tip = _commit(cwd, left or "HEAD"), _commit(cwd, right or "HEAD")
        return Scope(tip, spec, _log(cwd, f"{base}..{tip}"), base=base)
    tip = _commit(cwd, spec or "HEAD")
    label = spec or "HEAD"
    if since_ms is None:
        return Scope(tip, label)
    since = -(-since_ms // 1000)  # whole seconds, rounded up: git dates have no more
    made = {sha: when for sha, when in _log(cwd, tip).items() if when >= since}
    return Scope(tip, label, made, since_ms)  # filtered here: git's --since stops walking
                                              # at the first older commit
