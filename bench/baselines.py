"""Baselines the check benchmarks measure git-gasp against (run as `python bench/<script>.py`).

`reference_check` is the reference checker's method for check 4: `git rev-list
--reverse --full-history HEAD -- <path>`, then one `git show <commit>:<path>` per
listed commit, each version compared by prefix with the one listed before it. It is
wrong on branchy histories (consecutive rev-list entries need not be parent and
child), which is why it reports violations on merges; the benchmarks time it anyway.
The `git cat-file --batch` baseline is the standalone script bench/catfile_prefix.py.
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

LOG = "state/events.jsonl"
APPEND_ONLY_NAMES = ("facts.jsonl", "JOURNAL.md")


def _git(root: Path, *args: str) -> bytes:
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True)
    if proc.returncode:
        raise SystemExit(f"git {' '.join(args)} failed in {root}: "
                         f"{proc.stderr.decode(errors='replace')}")
    return proc.stdout


def append_only_paths(root: Path) -> list[str]:
    """The append-only files tracked in HEAD: the log, every facts.jsonl and JOURNAL.md."""
    names = _git(root, "ls-files", "-z").decode().split("\0")
    return [p for p in names if p == LOG or p.rsplit("/", 1)[-1] in APPEND_ONLY_NAMES]


@dataclass
class RefResult:
    """What the reference method found for one path."""

    path: str
    listed: int  # commits rev-list named (one `git show` each)
    violations: list[str]  # commits whose version does not extend the previous one
    seconds: float  # wall time of this path's rev-list and `git show`s


def reference_check(root: Path, paths: list[str] | None = None) -> list[RefResult]:
    """The reference checker's method on each of `paths` (default: every append-only file)."""
    out = []
    for path in paths if paths is not None else append_only_paths(root):
        t0 = time.perf_counter()
        listed = _git(root, "rev-list", "--reverse", "--full-history", "HEAD", "--",
                      path).split()
        bad, prev = [], None
        for sha in listed:
            proc = subprocess.run(["git", "show", f"{sha.decode()}:{path}"], cwd=root,
                                  capture_output=True)
            data = proc.stdout if proc.returncode == 0 else None
            if prev is not None and (data is None or not data.startswith(prev)):
                bad.append(sha.decode())
            prev = data
        out.append(RefResult(path, len(listed), bad, time.perf_counter() - t0))
    return out
