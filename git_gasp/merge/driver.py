"""The merge driver's I/O: pick the rule by path, read the three files, write %A.

Git runs the driver for merge, rebase, cherry-pick and stash pop alike, with
temporary files for %O %A %B and the real path as %P; the result goes into %A
and the exit status says clean (0) or conflicted (non-zero).
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable
from pathlib import Path

from git_gasp.base import git
from git_gasp.base.errors import GaspError
from git_gasp.base.files import atomic_write, read_file
from git_gasp.merge.journal import merge_journal
from git_gasp.merge.jsonl import merge_jsonl
from git_gasp.merge.lines import MergeResult

DISABLE_ENV = "GASP_NO_MERGE_DRIVER"
JOURNAL_NAME = "JOURNAL.md"


def disabled(environ: dict[str, str] | os._Environ = os.environ) -> bool:
    """True when the environment turns the driver off (any value but empty or `0`)."""
    return environ.get(DISABLE_ENV, "") not in ("", "0")


def rule_for(path: str) -> str:
    """`jsonl`, `journal` or `text`: which merge applies to the repo path `path`."""
    path = path.replace("\\", "/")
    if path.endswith(".jsonl"):  # state/events.jsonl, every facts.jsonl, other logs
        return "jsonl"
    if posixpath.basename(path) == JOURNAL_NAME:
        return "journal"
    return "text"


def text_merge(current: str, ancestor: str, other: str, marker_size: int) -> int:
    """git's own line merge of the three files into `current` (in place); its exit
    status, the number of conflicts. It runs in the repository and environment git gave
    the driver, and talks to the terminal as git's own merge would."""
    return git.run(
        os.getcwd(), "merge-file", "-L", "ours", "-L", "base", "-L", "theirs",
        f"--marker-size={marker_size}", current, ancestor, other,
        check=False, inherit_git_env=True, capture=False,
    ).returncode


def _read(label: str, name: str) -> bytes:
    try:
        return read_file(name)
    except OSError as exc:
        raise GaspError(f"cannot read the {label} version {name}: {exc.strerror}") from None


def merge_bytes(
    rule: str, base: bytes, ours: bytes, theirs: bytes, marker_size: int
) -> MergeResult:
    """Apply the `jsonl` or `journal` rule to three versions held in memory."""
    if rule == "jsonl":
        return merge_jsonl(base, ours, theirs, marker_size)
    return merge_journal(base, ours, theirs, marker_size)


def _write_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a tmp file beside it: a kill leaves the old %A."""
    try:
        atomic_write(path, data, durable=False)
    except OSError as exc:
        raise GaspError(f"cannot write the merge result to {path}: {exc.strerror}") from None


def run(
    ancestor: str,
    current: str,
    other: str,
    marker_size: int,
    path: str,
    say: Callable[[str], None],
) -> int:
    """The whole driver: merge into `current`, report through `say`, return 0 or 1."""
    if marker_size < 1:
        raise GaspError(f"--marker-size must be at least 1, not {marker_size}", exit_code=2)
    rule = rule_for(path)
    if disabled() or rule == "text":
        return text_merge(current, ancestor, other, marker_size)
    result = merge_bytes(
        rule, _read("base", ancestor), _read("ours", current), _read("theirs", other), marker_size
    )
    _write_atomic(Path(current), result.data)
    prefix = f"git gasp merge-driver: {path}:"
    for note in result.notes:
        say(f"{prefix} note: {note}")
    if result.clean:
        return 0
    for conflict in result.conflicts:
        say(f"{prefix} conflict: {conflict}")
    say(
        f"{prefix} left conflict markers: keep every line once, ours' lines first, then "
        f"`git add {path}`; or `{DISABLE_ENV}=1 git checkout -m {path}` redoes it "
        "as git's text merge"
    )
    return 1
