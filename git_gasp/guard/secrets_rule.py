"""The guard's secret rule: what a commit adds to a state file holds no secret.

The state files of an agent root are its logs, ``memory/``, ``journal/``,
``identity/``, ``skills/`` and ``snapshots/`` (and every append-only path its manifest
declares). Only what the commit adds is scanned (`redact.scan`, the redactor's own
detectors, linear time): the lines appended to an append-only file (for the log, the
tail the log rules already cut), else the lines of the staged file that no parent's
version has. A finding refuses the commit naming the file, the line, the detector and
the fingerprint — never the secret — unless the fingerprint is in the root's
allowlist (``.agent/secrets-allow``, as staged).
"""

from __future__ import annotations

import stat
from typing import Protocol

from git_gasp.guard.rejection import SECRET_FIX, SECRET_RULE
from git_gasp.protocol.appendonly import AppendOnlyPaths

STATE_DIRS = (b"state/", b"memory/", b"journal/", b"identity/", b"skills/", b"snapshots/")
_ALLOW = b".agent/secrets-allow"  # redact.scan.ALLOWLIST_REL (a test holds them equal)

File = tuple[int, bytes]  # (mode, blob id)


class Sides(Protocol):
    """What the rule reads of the commit (`commit_guard._Guard`)."""

    index: dict
    head: dict
    parents: list
    added: dict[bytes, tuple[int, bytes]]

    def changed_paths(self) -> set[bytes]: ...
    def blob(self, sha: bytes, prefix: int | None = None) -> bytes: ...
    def paths_of(self, root: bytes, files: dict) -> AppendOnlyPaths: ...
    def _is_root(self, root: bytes) -> bool: ...
    def reject(self, path: bytes, line: int | None, rule: str, message: str,
               fix: str | None = None) -> None: ...


def is_state_file(rel: bytes, paths: AppendOnlyPaths) -> bool:
    """True for a path (relative to its agent root) the secret rule scans."""
    return rel.startswith(STATE_DIRS) or rel in paths


def added_lines(old: list[bytes], new: bytes) -> tuple[int, bytes] | list[tuple[int, bytes]]:
    """What `new` adds to the versions `old`: (first line, the appended bytes) when it
    extends one of them (a new file: all of it), else each line (number, bytes) that
    none of them has."""
    if not old:
        return 1, new
    for base in sorted(old, key=len, reverse=True):
        if new.startswith(base) and (not base or base.endswith(b"\n")):
            return base.count(b"\n") + 1, new[len(base):]
    known = {line for base in old for line in base.split(b"\n")}
    return [(n, line) for n, line in enumerate(new.split(b"\n"), 1) if line not in known]


def check_secrets(guard: Sides) -> None:
    """Refuse every secret the commit adds to a state file of any agent root."""
    scan = None
    for path in sorted(guard.changed_paths()):
        new = guard.index.get(path)
        if new is None or not stat.S_ISREG(new[0]):
            continue
        found = _root_of(guard, path)
        if found is None:
            continue
        root, rel = found
        if not is_state_file(rel, guard.paths_of(root, guard.index)):
            continue
        if path in guard.added:
            first, data = guard.added[path]
            chunks = [(first, data)]
        else:
            olds = [guard.blob(side[path][1]) for side in (guard.head, *guard.parents)
                    if _regular(side.get(path))]
            added = added_lines(olds, guard.blob(new[1]))
            chunks = [added] if isinstance(added, tuple) else added
        if scan is None:  # the detectors compile 8.5 ms of regexes: only when needed
            from git_gasp.redact import scan
        allowed: set[str] | None = None
        for first, data in chunks:
            for secret in scan.scan_bytes(data, first):
                if allowed is None:
                    allowed = _allowlist(guard, root, scan.parse_allowlist)
                if secret.fingerprint in allowed:
                    continue
                guard.reject(path, secret.line, SECRET_RULE,
                             f"{secret.kind} secret (fingerprint {secret.fingerprint})",
                             SECRET_FIX.format(path="{path}", fingerprint=secret.fingerprint))


def _root_of(guard: Sides, path: bytes) -> tuple[bytes, bytes] | None:
    """(agent root, path relative to it) for the innermost root above `path`."""
    parts = path.split(b"/")
    for depth in range(len(parts) - 1, -1, -1):
        root = b"/".join(parts[:depth])
        if guard._is_root(root):
            return root, path[len(root) + 1 if root else 0:]
    return None


def _allowlist(guard: Sides, root: bytes, parse) -> set[str]:
    entry = guard.index.get((root + b"/" if root else b"") + _ALLOW)
    if not _regular(entry):
        return set()
    return parse(guard.blob(entry[1]))


def _regular(file: File | None) -> bool:
    return file is not None and stat.S_ISREG(file[0])

