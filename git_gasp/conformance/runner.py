"""Run the seven checks on an agent root and build the Report."""

from __future__ import annotations

import os
from collections.abc import Callable

from git_gasp.conformance.checks import run_all
from git_gasp.conformance.report import Report
from git_gasp.conformance.since import baseline, grandfather
from git_gasp.store.agent import load_agent


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
