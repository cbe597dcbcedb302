"""A push as the server's guard sees it: the reasons to refuse it, its ref updates, the
repository's ``gasp.*`` settings and objects (the push's quarantine first), and the
pushed commits an update reaches. Shared by ``receive`` (check 4 and the protection)
and ``receive_check`` (checks 1, 5 and 7 on the appended lines)."""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path

from git_gasp.base import git
from git_gasp.odb.database import ObjectDatabase

DEFAULT_PROTECT = "refs/heads/*"


@dataclass(frozen=True)
class Refusal:
    """One reason to refuse a push: a ref, the commit, path and line when known, and why."""

    ref: str
    why: str
    commit: str | None = None
    path: str | None = None
    lineno: int | None = None

    def line(self) -> str:
        """The one line printed for it."""
        where_path = self.path if self.path is None or self.lineno is None \
            else f"{self.path}:{self.lineno}"
        where = " ".join(x for x in (f"commit {self.commit[:12]}" if self.commit else "",
                                     where_path or "") if x)
        return f"git gasp: refused {self.ref}: " + (f"{where}: " if where else "") + self.why


def git_run(git_dir: Path, *args: str, input: bytes | None = None):
    """git in the receiving repository, unchecked, with the hook's environment: the
    quarantine (GIT_QUARANTINE_PATH, GIT_OBJECT_DIRECTORY, ...) must reach it."""
    return git.run(git_dir, *args, check=False, inherit_git_env=True, input=input)


@dataclass
class Settings:
    """The repository's ``gasp.protect`` globs, ``gasp.root`` and ``gasp.allowForget``
    (read once a push)."""

    protect: list[str]
    root: bytes
    allow_forget: bool = False

    @classmethod
    def read(cls, git_dir: Path) -> Settings:
        proc = git_run(git_dir, "config", "-z", "--get-regexp",
                       r"^gasp\.(protect|root|allowforget)$")
        values: dict[str, list[str]] = {"gasp.protect": [], "gasp.root": [],
                                        "gasp.allowforget": []}
        if proc.returncode == 0:
            for item in proc.stdout.decode("utf-8", "surrogateescape").split("\0"):
                key, _, value = item.partition("\n")
                if key in values:
                    values[key].append(value)
        roots = values["gasp.root"]
        allow = values["gasp.allowforget"]
        return cls(values["gasp.protect"] or [DEFAULT_PROTECT],
                   os.fsencode(roots[-1].strip("/")) if roots else b"",
                   bool(allow) and allow[-1].strip().lower() in ("true", "yes", "on", "1"))

    def protected(self, ref: str) -> bool:
        return any(fnmatch.fnmatchcase(ref, g) for g in self.protect)


def protected(git_dir: Path, ref: str) -> bool:
    """Whether `ref` matches a ``gasp.protect`` glob (default: every branch)."""
    return Settings.read(git_dir).protected(ref)


def object_store(git_dir: Path):
    """The repository's objects, with the push's quarantine first when there is one."""
    quarantine = os.environ.get("GIT_QUARANTINE_PATH")
    return ObjectDatabase.open(str(Path(git.common_dir(git_dir)) / "objects"),
                               quarantine if quarantine and os.path.isdir(quarantine) else None
                               ).store


@dataclass
class Update:
    """One ref update of the push, its objects peeled to commits."""

    old: str
    new: str
    ref: str
    head: bytes | None  # NEW's commit (None: NEW names no commit)
    guarded: bool
    refused: bool = False  # check 4 (or the protection) refused it


def reach(walker, head: bytes, pushed: set[bytes]) -> tuple[list[bytes], set[bytes]]:
    """The pushed commits reachable from `head` (parents before children) and the
    commits already in the repository that are their parents (from the walk's reads)."""
    order: list[bytes] = []
    base: set[bytes] = set()
    if head not in pushed:
        return order, base
    seen = {head}
    stack: list[tuple[bytes, bool]] = [(head, False)]
    while stack:
        sha, expanded = stack.pop()
        if expanded:
            order.append(sha)
            continue
        stack.append((sha, True))
        info = walker.info.get(sha)
        for parent in reversed(info.parents) if info is not None and \
                not isinstance(info, str) else ():
            if parent not in pushed:
                base.add(parent)
            elif parent not in seen:
                seen.add(parent)
                stack.append((parent, False))
    return order, base
