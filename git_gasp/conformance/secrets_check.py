"""`check`'s secret findings: the state files as they stand, scanned as the guard scans
what a commit adds (`redact.scan`), reported on check 6 as soft findings (notes; failures
under ``--strict``), the fingerprints of ``.agent/secrets-allow`` left out.

The state files are those of `guard.secrets_rule` (the log, ``memory/``, ``journal/``,
``identity/``, ``skills/``, ``snapshots/``). Their scans are cached in the git dir
(``gasp/secret-scan.json``: per file its scanned length, the sha256 of those bytes and
the findings), so a file that only grew is scanned from where the last check stopped:
the redactor's cost is paid once per line, not once per `check`.

Also a note when the upstream of the state branch was rewritten by a `git gasp forget`
this clone has not made (`store.forget.upstream_forgot`): what to do about it.
"""

from __future__ import annotations

import json
import os
from hashlib import sha256
from pathlib import Path

from git_gasp.base.files import atomic_write, read_file
from git_gasp.base.git import find_git_dir
from git_gasp.conformance.report import CheckResult
from git_gasp.redact.scan import ALLOWLIST_REL, parse_allowlist, scan_bytes
from git_gasp.store.agent import AgentRepo
from git_gasp.store.agentfs import AgentFileError, file_paths, read_regular
from git_gasp.store.forget import upstream_forgot

STATE_DIRS = ("state", "memory", "journal", "identity", "skills", "snapshots")
CACHE = ("gasp", "secret-scan.json")
_FIX = ("remove it and commit, then `git gasp forget --fingerprint {fp}` rewrites it out "
        "of the history; a false positive goes in " + ALLOWLIST_REL)


def report_secrets(repo: AgentRepo, res: CheckResult) -> None:
    """A soft finding on `res` for each secret in a state file of `repo`."""
    root = str(repo.root)
    try:
        allowed = parse_allowlist(read_regular(root, ALLOWLIST_REL))
    except AgentFileError:
        allowed = set()
    cache = _Cache(root)
    for rel in state_paths(repo):
        try:
            data = read_regular(root, rel)
        except AgentFileError:
            continue  # the checks that own the file report it
        for line, kind, fp in cache.scan(rel, data):
            if fp not in allowed:
                res.soft_fail(f"{kind} secret (fingerprint {fp}): {_FIX.format(fp=fp)}",
                              path=rel, line=line)
    cache.save()
    rewritten = upstream_forgot(Path(root), repo.log_rel)
    if rewritten is not None:
        upstream, fps = rewritten
        res.notes.append(
            f"{upstream} was rewritten by `git gasp forget` ({', '.join(fps)}); this clone's "
            f"history still holds the secret: with no commits of your own, `git reset "
            f"--hard {upstream}`, else `git gasp forget "
            + " ".join(f"--fingerprint {fp}" for fp in fps)
            + "`; then `git reflog expire --expire=now --all && git gc --prune=now`")


def state_paths(repo: AgentRepo) -> list[str]:
    """The state files of `repo` (relative to its root), the log first."""
    out = [repo.log_rel]
    for folder in STATE_DIRS:
        try:
            out += [rel.decode("utf-8", "surrogateescape")
                    for rel, _path in file_paths(repo.root, folder)]
        except AgentFileError:
            continue
    return list(dict.fromkeys(out))


class _Cache:
    """The findings of the last scan of each file, by the bytes it scanned."""

    def __init__(self, root: str) -> None:
        gdir = find_git_dir(root)
        self.path = Path(gdir, *CACHE) if gdir is not None else None
        self.entries: dict = {}
        self.changed = False
        if self.path is not None:
            try:
                loaded = json.loads(read_file(self.path))
                self.entries = loaded if isinstance(loaded, dict) else {}
            except (OSError, ValueError):
                self.entries = {}

    def scan(self, rel: str, data: bytes) -> list[tuple[int, str, str]]:
        """(line, kind, fingerprint) of each secret in `data`, the file at `rel`."""
        entry = self.entries.get(rel)
        found: list = []
        start = 0
        if isinstance(entry, dict) and isinstance(entry.get("length"), int) \
                and 0 < entry["length"] <= len(data) \
                and data[entry["length"] - 1:entry["length"]] == b"\n" \
                and sha256(data[:entry["length"]]).hexdigest() == entry.get("sha256"):
            start, found = entry["length"], [tuple(f) for f in entry.get("findings", [])]
        if start == len(data):
            return found
        end = data.rfind(b"\n") + 1 or len(data)
        first = data.count(b"\n", 0, start) + 1
        found += [(s.line, s.kind, s.fingerprint) for s in scan_bytes(data[start:], first)]
        self.entries[rel] = {"length": end, "sha256": sha256(data[:end]).hexdigest(),
                             "findings": [list(f) for f in found if f[0] < first
                                          + data.count(b"\n", start, end)]}
        self.changed = True
        return found

    def save(self) -> None:
        if self.path is None or not self.changed:
            return
        try:
            os.makedirs(self.path.parent, exist_ok=True)
            atomic_write(self.path, json.dumps(self.entries, sort_keys=True).encode())
        except OSError:
            pass  # a cache that cannot be written costs only time
