"""What `git gasp sync` checks before it pushes: the rules a server's pre-receive
applies (check 4's walker on the commits the push brings, each against its parents),
then a cached `git gasp check` of the result in the work tree."""

from __future__ import annotations

import os
from pathlib import Path

from git_gasp.base import git
from git_gasp.conformance.history.walk import Walker
from git_gasp.conformance.runner import check_repo
from git_gasp.odb.database import ObjectDatabase
from git_gasp.odb.repo import prefix_of
from git_gasp.protocol.failure import Failure


def _say(f: Failure) -> str:
    where = f.location()
    return f"{where}: {f.message}" if where else f.message


def new_commit_failures(top: Path, agent_root: Path, log_rel: str, tip: str,
                        base: str | None) -> list[str]:
    """Check 4's rules on the commits reachable from `tip` and not from `base` (every
    commit when `base` is None), the boundary commits counting as verified: what the
    remote's pre-receive would refuse."""
    listed = git.run(top, "rev-list", "--boundary", tip, *(("--not", base) if base else ()),
                     check=False)
    if listed.returncode != 0:
        return [f"cannot list the commits to push: {listed.stderr.decode(errors='replace')}"]
    boundary = {line[1:].encode() for line in listed.stdout.decode().split()
                if line.startswith("-")}
    store = ObjectDatabase.open(str(git.common_dir(top) / "objects")).store
    try:
        walker = Walker(store, prefix_of(agent_root, str(top)), frozenset(),
                        os.fsencode(log_rel))
        walker.cached = boundary
        try:
            walker.walk(tip.encode(), set())
        except Exception as exc:  # noqa: BLE001 - fail closed, never crash
            walker.fail(f"history walk failed: {type(exc).__name__}: {exc}")
        return [_say(f) for f in walker.result.failures]
    finally:
        store.close()


def check_failures(agent_root: Path, since: str | None = None) -> list[str]:
    """A cached `git gasp check` of the agent at `agent_root` (its work tree and
    history): each failure as ``check N (name): where: why``."""
    report = check_repo(agent_root, use_cache=True, since=since)
    return [f"check {c.number} ({c.name}): {_say(f)}" for c in report.checks
            for f in c.failures]
