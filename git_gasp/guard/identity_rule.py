"""Check 6's identity rule at commit time: a commit that stages an agent root's
`identity/` files or its `AGENT.md` must leave the staged `identity_hash` equal to the
digest of the staged identity files (the Part I recipe), so no commit in history breaks
restore step 2 — the reference's check 6 fails closed on a missing, malformed or
mismatched digest, and so does this rule."""

from __future__ import annotations

import stat
from collections.abc import Callable, Iterable

from git_gasp.guard.staged import IndexFiles, TreeFiles
from git_gasp.protocol.identity import identity_hash, normalize_declared
from git_gasp.protocol.manifest import ManifestError, parse_manifest

File = tuple[int, bytes]  # (mode, blob id), as the guard's sides hold them

IDENTITY_RULE = "check 6, identity hash"
IDENTITY_FIX = ("record an approved identity change in one commit with `git gasp identity "
                "amend --approved-by NAME --reason WHY` (it updates identity_hash in "
                "AGENT.md and appends the decision), or put identity/ back as it was")


def identity_dir(manifest_bytes: bytes) -> bytes:
    """Where the manifest keeps identity (relative to its root); ManifestError if it does
    not parse."""
    return parse_manifest(manifest_bytes).locations.get("identity", "identity").encode()


def touches_identity(root: bytes, changed: Iterable[bytes], ident: bytes) -> bool:
    """Whether any of the `changed` paths (from the work tree top) is the root's
    AGENT.md or lies under its identity directory `ident`."""
    join = root + b"/" if root else b""
    inside = join + ident.rstrip(b"/") + b"/"
    return any(p == join + b"AGENT.md" or p.startswith(inside) for p in changed)


def identity_problem(root: bytes, files: dict[bytes, File],
                     blob: Callable[[bytes], bytes]) -> str | None:
    """Why the staged `files` (path from the work tree top -> (mode, blob id)) break the
    identity hash of the agent root `root`, or None. `blob` reads a blob's bytes."""
    join = root + b"/" if root else b""
    entry = files.get(join + b"AGENT.md")
    if entry is None or not stat.S_ISREG(entry[0]):
        return None  # no manifest in the commit: not a root this rule can judge
    try:
        manifest = parse_manifest(blob(entry[1]))
    except ManifestError as exc:
        return f"AGENT.md does not parse, so the identity hash cannot be verified: {exc}"
    ident = manifest.locations.get("identity", "identity").encode().rstrip(b"/")
    inside = join + ident + b"/"
    staged = sorted((path, f) for path, f in files.items() if path.startswith(inside))
    if not staged:
        return f"{ident.decode(errors='replace')}/ holds no files"
    for path, (mode, _sha) in staged:
        if not stat.S_ISREG(mode):
            return f"{path.decode(errors='replace')} is not a regular file (identity files " \
                   "are hashed by their bytes)"
    if manifest.identity_hash is None:
        return "AGENT.md declares no identity_hash (`git gasp identity hash` prints it)"
    declared = normalize_declared(manifest.identity_hash)
    if declared is None:
        return "identity_hash in AGENT.md is not a SHA-256 hex digest"
    actual = identity_hash((b"identity/" + path[len(inside):], blob(sha))
                           for path, (_mode, sha) in staged)
    if actual != declared:
        return (f"identity_hash in AGENT.md is {declared[:12]}… but the staged identity "
                f"files hash to {actual[:12]}…")
    return None


def staged_under(index: IndexFiles | dict, prefix: bytes) -> dict[bytes, File]:
    """Every file the index (`IndexFiles` or a dict side) holds under the directory
    `prefix` (ending in ``/``)."""
    if isinstance(index, dict):
        return {p: f for p, f in index.items() if p.startswith(prefix) and f is not None}
    head = index.head
    files = head.files_under(prefix) if isinstance(head, TreeFiles) else {
        p: f for p, f in head.items() if p.startswith(prefix) and f is not None}
    for path, entry in index.changed.items():
        if path.startswith(prefix):
            if entry is None:
                files.pop(path, None)
            else:
                files[path] = entry
    return files

