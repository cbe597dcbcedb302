"""Identity: compute / verify the hash of identity/, and the one-commit amend procedure.

Amend (spec Part I commit rules): in ONE commit, identity/ is edited, AGENT.md's
`identity_hash` is updated and a decision event naming the approver and the reason
is appended to the log — so the manifest never disagrees with identity/ in history.
"""

from __future__ import annotations

import re
from pathlib import Path

from git_gasp.errors import GaspError
from git_gasp.protocol.identity import identity_hash, normalize_declared

_HASH_LINE = re.compile(r"^(\s*identity_hash\s*:\s*)(\"?)(?:sha256:)?[0-9A-Fa-f]*\2[ \t]*$", re.M)


def compute_identity_hash(root: Path, ident_rel: str = "identity") -> str:
    """SHA-256 over identity/ as the spec recipe prints it (paths as identity/<file>)."""
    from git_gasp.store.agentfs import AgentFileError, list_files

    try:
        files = list_files(Path(root), ident_rel)
    except AgentFileError as exc:
        raise GaspError(f"identity cannot be read: {exc}") from None
    if not files:
        raise GaspError(f"{ident_rel}/ holds no files")
    prefix = ident_rel.encode()
    return identity_hash([(b"identity" + rel[len(prefix):], p.read_bytes()) for rel, p in files])


def declared_identity_hash(root: Path):
    """(manifest, declared digest or None)."""
    from git_gasp.protocol.manifest import ManifestError, parse_manifest
    from git_gasp.store.agentfs import AgentFileError, read_regular

    try:
        manifest = parse_manifest(read_regular(Path(root), "AGENT.md"))
    except (AgentFileError, ManifestError) as exc:
        raise GaspError(f"AGENT.md: {exc}") from None
    return manifest, normalize_declared(manifest.identity_hash)


def verify_identity(root: Path) -> tuple[str | None, str]:
    """(declared, actual); raises GaspError when they differ."""
    manifest, declared = declared_identity_hash(root)
    actual = compute_identity_hash(root, manifest.locations["identity"])
    if declared is None:
        raise GaspError("AGENT.md declares no valid identity_hash")
    if declared != actual:
        raise GaspError(f"identity_hash in AGENT.md is {declared[:12]}… but identity/ hashes "
                        f"to {actual[:12]}…; amend it with `git gasp identity amend`")
    return declared, actual


def set_manifest_hash(text: str, digest: str) -> str:
    new, count = _HASH_LINE.subn(lambda m: f"{m.group(1)}{digest}", text, count=1)
    if count != 1:
        raise GaspError("AGENT.md has no `identity_hash:` line to update")
    return new


def amend_identity(state, approver: str, reason: str,
                   changes: dict[str, bytes] | None = None) -> tuple[bytes, str, str]:
    """Write `changes` (paths under identity/), update AGENT.md, record the decision and
    commit the three together; return (commit id, old hash, new hash)."""
    from git_gasp.runtime.commit import commit_paths

    root = Path(state.root)
    if not approver or "\n" in approver:
        raise GaspError("an identity amend needs the approver's name (one line)")
    if not reason or "\n" in reason:
        raise GaspError("an identity amend needs a one-line reason")
    manifest, declared = declared_identity_hash(root)
    ident = manifest.locations["identity"]
    for rel in changes or {}:
        parts = Path(rel).parts
        if not parts or parts[0] != ident or ".." in parts or len(parts) < 2:
            raise GaspError(f"{rel} is not a file under {ident}/")
    for rel, data in (changes or {}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    new = compute_identity_hash(root, ident)
    if new == declared:
        raise GaspError(f"{ident}/ is unchanged (it already hashes to the declared "
                        f"{new[:12]}…); edit it first")
    agent_md = root / "AGENT.md"
    agent_md.write_text(set_manifest_hash(agent_md.read_text(encoding="utf-8"), new),
                        encoding="utf-8")
    state.record_decision("Approved", reason, decided_by=("user", approver),
                          metadata={"identity_hash_from": declared, "identity_hash_to": new,
                                    "subject": "identity"})
    message = (f"identity: {reason}\n\nApproved-by: {approver}\n"
               f"Identity-Hash: {new}\n").encode()
    commit = commit_paths(root, [ident, "AGENT.md", state.store.rel], message,
                          log_rel=state.store.rel)
    return commit, declared or "", new
