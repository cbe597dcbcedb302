"""`check`'s secret findings: the state files as they stand, scanned as the guard scans
what a commit adds (`redact.scan`), reported on check 6 as soft findings (notes; failures
under ``--strict``), the fingerprints of ``.agent/secrets-allow`` left out.

The state files are those of `guard.secrets_rule` (the log, ``memory/``, ``journal/``,
``identity/``, ``skills/``, ``snapshots/``). Their scans are cached in the git dir
(``gasp/secret-scan.json``: per file its scanned length, the sha256 of those bytes, its
stat data and the findings): a file whose size, times and inode are as scanned is not
read again, and a file that only grew is scanned from where the last check stopped, so
the redactor's cost is paid once per line, not once per `check`.

Also a note when the upstream of the state branch was rewritten by a `git gasp forget`
this clone has not made (`store.forget.upstream_forgot`): what to do about it.
"""

from __future__ import annotations

import json
import os
from hashlib import sha256
from pathlib import Path

from git_gasp.base.fileops import UnsafePath
from git_gasp.base.files import atomic_write, read_file
from git_gasp.base.gitdir import discover
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
        found = cache.unchanged(rel)
        if found is None:
            try:
                data = read_regular(root, rel)
            except AgentFileError:
                continue  # the checks that own the file report it
            found = cache.scan(rel, data)
        for line, kind, fp in found:
            if fp not in allowed:
                res.soft_fail(f"{kind} secret (fingerprint {fp}): {_FIX.format(fp=fp)}",
                              path=rel, line=line)
    note = cache.upstream_note(repo.log_rel)
    if note:
        res.notes.append(note)
    cache.save()


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
        self.root = root
        found = discover(root)
        self.path = Path(found.path, *CACHE) if found is not None else None
        self.dirs = [] if found is None else [Path(d) for d in dict.fromkeys(
            (found.path, found.common))]
        self.entries: dict = {}
        self.changed = False
        if self.path is not None:
            try:
                loaded = json.loads(read_file(self.path))
                self.entries = loaded if isinstance(loaded, dict) else {}
            except (OSError, ValueError):
                self.entries = {}

    def _stat(self, rel: str) -> list[int] | None:
        try:
            st = os.lstat(os.path.join(self.root, rel))
        except OSError:
            return None
        return [st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns]

    def unchanged(self, rel: str) -> list[tuple[int, str, str]] | None:
        """The cached findings of `rel` when the file is as scanned (same size, times and
        inode: not even read), else None."""
        entry = self.entries.get(rel)
        stat = self._stat(rel)
        if not isinstance(entry, dict) or stat is None or entry.get("stat") != stat \
                or entry.get("length") != stat[0]:
            return None
        return [tuple(f) for f in entry.get("findings", [])]

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
                             "stat": self._stat(rel),
                             "findings": [list(f) for f in found if f[0] < first
                                          + data.count(b"\n", start, end)]}
        self.changed = True
        return found

    def upstream_note(self, log_rel: str) -> str | None:
        """What to do when the upstream was rewritten by a forget this clone has not
        made (`upstream_forgot`); asked of git only when a fetch or a change of HEAD
        happened since the last answer (a git process costs more than the rest)."""
        key = self._fetch_key()
        cached = self.entries.get("\0upstream")
        if isinstance(cached, dict) and key is not None and cached.get("key") == key:
            note = cached.get("note")
            return note if isinstance(note, str) else None
        rewritten = upstream_forgot(Path(self.root), log_rel)
        note = None
        if rewritten is not None:
            upstream, fps = rewritten
            note = (f"{upstream} was rewritten by `git gasp forget` ({', '.join(fps)}); this "
                    "clone's history still holds the secret: with no commits of your own, "
                    f"`git reset --hard {upstream}`, else `git gasp forget "
                    + " ".join(f"--fingerprint {fp}" for fp in fps)
                    + "`; then `git reflog expire --expire=now --all && git gc --prune=now`")
        if key is not None:
            self.entries["\0upstream"] = {"key": key, "note": note}
            self.changed = True
        return note

    def _fetch_key(self) -> list | None:
        """The stat data of FETCH_HEAD (worktree and common git dir), HEAD and its
        reflog: what a fetch, a commit or a reset changes."""
        if self.path is None:
            return None
        key: list = []
        for d in self.dirs:
            for name in ("FETCH_HEAD", "HEAD", "logs/HEAD"):
                try:
                    st = os.stat(d / name)
                    key.append([st.st_size, st.st_mtime_ns, st.st_ino])
                except OSError:
                    key.append(None)
        return key

    def save(self) -> None:
        if self.path is None or not self.changed:
            return
        try:
            os.makedirs(self.path.parent, exist_ok=True)
            atomic_write(self.path, json.dumps(self.entries, sort_keys=True).encode())
        except (OSError, UnsafePath):
            pass  # a cache that cannot be written (or is a link) costs only time
