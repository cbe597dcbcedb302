"""The server's secret rule: no pushed commit adds a secret to a state file.

For each commit a push brings (parents first), the state files of the agent root
(`secrets_rule.STATE_DIRS` below ``gasp.root``) that differ from every parent's are
scanned where they differ (`secrets_rule.added_lines`: the appended tail, else the
lines no parent has), with the redactor's detectors; a fingerprint in the commit's own
``.agent/secrets-allow`` passes. A finding refuses the update naming the commit, the
file, the line, the detector and the fingerprint, never the secret.
"""

from __future__ import annotations

import stat

from git_gasp.guard.push import Refusal
from git_gasp.guard.secrets_rule import STATE_DIRS, added_lines
from git_gasp.odb.database import ObjectDatabase
from git_gasp.odb.objects import ObjectError
from git_gasp.redact.scan import ALLOWLIST_REL, parse_allowlist, scan_bytes

File = tuple[int, bytes]


def pushed_secrets(odb: ObjectDatabase, root: bytes, ref: str,
                   commits: list[bytes]) -> list[Refusal]:
    """A refusal for each secret the pushed `commits` (of update `ref`) add to the
    state files of the agent root at `root` ("" for the top of the tree)."""
    out: list[Refusal] = []
    for sha in commits:
        try:
            info = odb.commit(sha)
            files = state_files(odb, info.tree, root)
            parents = [state_files(odb, odb.commit(p).tree, root) for p in info.parents]
            out += _commit_secrets(odb, root, ref, sha, info.tree, files, parents)
        except (ObjectError, KeyError) as exc:
            out.append(Refusal(ref, f"cannot read the commit to scan it for secrets: {exc}",
                               sha.decode()))
    return out


def _commit_secrets(odb: ObjectDatabase, root: bytes, ref: str, sha: bytes, tree: bytes,
                    files: dict[bytes, File], parents: list[dict[bytes, File]]
                    ) -> list[Refusal]:
    out: list[Refusal] = []
    allowed: set[str] | None = None
    prefix = root + b"/" if root else b""
    for rel, (mode, blob) in sorted(files.items()):
        versions = [p[rel] for p in parents if rel in p]
        if not stat.S_ISREG(mode) or (mode, blob) in versions:
            continue
        olds = [odb.blob(v[1]) for v in versions if stat.S_ISREG(v[0])]
        added = added_lines(olds, odb.blob(blob))
        for first, data in [added] if isinstance(added, tuple) else added:
            for secret in scan_bytes(data, first):
                if allowed is None:
                    allowed = _allowlist(odb, tree, prefix)
                if secret.fingerprint not in allowed:
                    out.append(Refusal(
                        ref, f"{secret.kind} secret (fingerprint {secret.fingerprint}) "
                        "must never enter the history: remove it from the commit, or `git "
                        f"gasp forget --fingerprint {secret.fingerprint}` once it is "
                        f"committed; a false positive goes in {ALLOWLIST_REL}",
                        sha.decode(), (prefix + rel).decode("utf-8", "replace"),
                        secret.line))
    return out


def state_files(odb: ObjectDatabase, tree: bytes, root: bytes) -> dict[bytes, File]:
    """The files under the state directories of the agent root `root` in `tree`, by
    path relative to the root."""
    prefix = root + b"/" if root else b""
    found: dict[bytes, File] = {}
    for folder in STATE_DIRS:
        try:
            mode, sub = odb.lookup(tree, prefix + folder.rstrip(b"/"))
        except KeyError:
            continue
        if stat.S_ISDIR(mode):
            found.update({folder + path: f for path, f in odb.files(sub).items()})
    return found


def _allowlist(odb: ObjectDatabase, tree: bytes, prefix: bytes) -> set[str]:
    try:
        mode, blob = odb.lookup(tree, prefix + ALLOWLIST_REL.encode())
    except KeyError:
        return set()
    return parse_allowlist(odb.blob(blob)) if stat.S_ISREG(mode) else set()
