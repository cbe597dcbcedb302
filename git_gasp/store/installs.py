"""What git-gasp wrote into a project, so `git gasp uninstall` takes back exactly that:
before the first write of a project file (an agent's settings, .mcp.json, …) whether it
existed and its bytes, and the ``info/exclude`` lines it added. Kept in the git common
dir (``gasp/installed.json``), never in a file the project commits."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

from git_gasp.base import git
from git_gasp.base.errors import GaspError
from git_gasp.base.fileops import read_regular_file
from git_gasp.base.files import SMALL_FILE, atomic_write

JOURNAL = "gasp/installed.json"


def _journal_path(tree: Path) -> Path | None:
    try:
        return git.common_dir(tree) / JOURNAL
    except GaspError:
        return None  # not a git work tree: nothing to keep it in


def load(tree: Path) -> dict:
    """The journal of the repository around `tree`: ``{"files": {path: {"existed":
    bool, "bytes": base64 | None}}, "exclude": [line, …]}``."""
    path = _journal_path(tree)
    data = None
    if path is not None:
        try:
            raw = read_regular_file(path, limit=SMALL_FILE)
            data = json.loads(raw) if raw else None
        except (OSError, ValueError):
            data = None
    if not isinstance(data, dict):
        data = {}
    data.setdefault("files", {})
    data.setdefault("exclude", [])
    return data


def _save(tree: Path, data: dict) -> None:
    path = _journal_path(tree)
    if path is not None:
        atomic_write(path, json.dumps(data, indent=1, sort_keys=True).encode() + b"\n",
                     make_parents=True)


def remember_file(tree: Path, path: Path) -> None:
    """Before git-gasp first writes `path` (in the work tree `tree`): note whether it
    existed and its bytes (later writes keep the first note)."""
    data = load(tree)
    key = os.path.abspath(path)
    if key in data["files"]:
        return
    try:
        old = read_regular_file(path, limit=SMALL_FILE)
    except OSError:
        return  # not a file we may read: not one we will take back either
    data["files"][key] = {"existed": old is not None,
                          "bytes": base64.b64encode(old).decode() if old is not None else None}
    _save(tree, data)


def remember_exclude(tree: Path, line: str) -> None:
    """Note a line git-gasp added to the repository's ``info/exclude``."""
    data = load(tree)
    if line not in data["exclude"]:
        data["exclude"].append(line)
        _save(tree, data)


def forget(tree: Path) -> None:
    """Drop the journal (after an uninstall took everything back)."""
    path = _journal_path(tree)
    if path is not None:
        path.unlink(missing_ok=True)


def _parsed(data: bytes, path: str):
    """The JSON or TOML a settings file holds (None: neither, or unreadable)."""
    try:
        if path.endswith(".toml"):
            import tomllib

            return tomllib.loads(data.decode("utf-8"))
        return json.loads(data) if data.strip() else {}
    except (ValueError, UnicodeDecodeError):
        return None


def give_back(tree: Path) -> list[str]:
    """After the uninstallers removed git-gasp's entries: delete the files git-gasp
    created that now hold nothing, write back byte for byte the files that existed when
    what they now hold equals what they held, take the ``info/exclude`` lines out; what
    changed otherwise is left, and said. Returns what it did, one line each."""
    data = load(tree)
    said: list[str] = []
    for key, note in data["files"].items():
        path = Path(key)
        try:
            now = read_regular_file(path, limit=SMALL_FILE)
        except OSError:
            continue
        if now is None:
            continue
        if not note.get("existed"):
            if _parsed(now, key) in ({}, []) or not now.strip():
                path.unlink()
                said.append(f"removed {path} (git-gasp created it)")
            else:
                said.append(f"left {path}: git-gasp created it, but it holds more now")
            continue
        before = base64.b64decode(note.get("bytes") or "")
        if now == before:
            continue
        if _parsed(now, key) is not None and _parsed(now, key) == _parsed(before, key):
            atomic_write(path, before, root=tree)
            said.append(f"restored {path} as it was")
        else:
            said.append(f"left {path}: it changed since git-gasp first wrote it")
    said += _drop_exclude_lines(tree, data["exclude"])
    forget(tree)
    return said


def _drop_exclude_lines(tree: Path, lines: list[str]) -> list[str]:
    if not lines:
        return []
    exclude = git.git_path(tree, "info/exclude")
    try:
        old = read_regular_file(exclude, limit=SMALL_FILE)
    except OSError:
        return []
    if old is None:
        return []
    drop = {line.encode("utf-8", "surrogateescape") for line in lines}
    kept = [line for line in old.split(b"\n") if line not in drop]
    new = b"\n".join(kept)
    if new == old:
        return []
    atomic_write(exclude, new, make_parents=True)
    return [f"removed {len(old.split(chr(10).encode())) - len(kept)} line(s) from {exclude}"]
