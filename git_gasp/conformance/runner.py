"""Run the seven checks on an agent root and build the Report."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from git_gasp.base.errors import UsageError
from git_gasp.conformance.checks import run_all
from git_gasp.conformance.report import Report
from git_gasp.conformance.since import baseline, grandfather
from git_gasp.store.agent import load_agent
from git_gasp.store.location import MANIFEST, find_root, not_an_agent_repository, require_root


def find_agent_root(path: str | None) -> str:
    """The agent root for PATH; without PATH, the nearest directory up holding AGENT.md,
    else the state directory the repository's config names (`store.location`).

    The upward search stops at the git work-tree root. A PATH that holds AGENT.md or
    the log is the root; another PATH is searched up from as the current directory is.
    No agent found is the one "not an agent repository" error (`store.location`, exit
    2); a missing manifest of a directory that holds a log is check 6's to report. A
    str as `str()` of a pathlib.Path shows it.
    """
    if path is not None:
        root = str(Path(path))
        if not Path(root).exists():
            raise UsageError(f"{path}: no such directory")
        if not Path(root).is_dir():
            raise UsageError(f"{path}: not a directory")
        if _agent_like(root):
            return root
        found = find_root(str(Path(os.path.abspath(root))))  # inside an agent: that agent
        if found is None:
            raise not_an_agent_repository(path)
        return found
    cwd = str(Path(os.getcwd()))
    return cwd if find_root(cwd) is None and _agent_like(cwd) else require_root(cwd)


def _agent_like(root: str) -> bool:
    return Path(root, MANIFEST).exists() or Path(root, "state", "events.jsonl").exists()


def resolve_agent_root(path: str | None) -> Path:
    """`find_agent_root` as a pathlib.Path."""
    return Path(find_agent_root(path))


def check_repo(root: str | os.PathLike, *, fixture: bool = False, use_cache: bool = True,
               label: str | None = None, strict: bool = False,
               progress: Callable[[int, int], None] | None = None,
               meanwhile: Callable[[], None] | None = None,
               since: str | None = None) -> Report:
    """Run all seven checks against the agent repo at `root` (`strict`: notes the
    reference checker tolerates are failures; `progress`: told (commits walked, commits
    to walk) during check 4's walk; `meanwhile`: more work, run beside the walk when it
    runs in a child process: `run_all`; `since`: a revision whose history predates the
    rules, its findings reported as notes: `conformance.since`)."""
    repo = load_agent(root)
    base = None
    if since is not None:
        base = baseline(root, since, repo.log_rel)  # a bad REV is refused before the walk
    results = run_all(repo, fixture=fixture, use_cache=use_cache, strict=strict,
                      progress=progress, meanwhile=meanwhile)
    if base is not None:
        grandfather(results, base, repo.log_rel, root)
    return Report(label or str(root), results)
