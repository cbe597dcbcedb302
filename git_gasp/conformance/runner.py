"""Run the seven checks on an agent root and build the Report."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from git_gasp.base.errors import UsageError
from git_gasp.conformance.checks import run_all
from git_gasp.conformance.report import Report
from git_gasp.store.agent import MANIFEST, load_agent


def resolve_agent_root(path: str | None) -> Path:
    """The agent root for PATH; without PATH, the nearest directory up holding AGENT.md.

    The upward search stops at the git work-tree root; if nothing is found the
    current directory is used (and check 6 reports the missing manifest).
    """
    if path is not None:
        root = Path(path)
        if not root.exists():
            raise UsageError(f"{path}: no such directory")
        if not root.is_dir():
            raise UsageError(f"{path}: not a directory")
        return root
    cwd = Path.cwd()
    for candidate in (cwd, *cwd.parents):
        if (candidate / MANIFEST).is_file():
            return candidate
        if (candidate / ".git").exists():
            break
    return cwd


def check_repo(root: Path, *, fixture: bool = False, use_cache: bool = True,
               label: str | None = None, strict: bool = False,
               progress: Callable[[int, int], None] | None = None,
               meanwhile: Callable[[], None] | None = None) -> Report:
    """Run all seven checks against the agent repo at `root` (`strict`: notes the
    reference checker tolerates are failures; `progress`: told (commits walked, commits
    to walk) during check 4's walk; `meanwhile`: more work, run beside the walk when it
    runs in a child process: `run_all`)."""
    repo = load_agent(root)
    return Report(label or str(root), run_all(repo, fixture=fixture, use_cache=use_cache,
                                              strict=strict, progress=progress,
                                              meanwhile=meanwhile))
