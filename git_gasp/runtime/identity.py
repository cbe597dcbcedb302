"""Identity: compute / verify the hash of identity/, and the one-commit amend procedure.

Amend (spec Part I commit rules): in ONE commit, identity/ is edited, AGENT.md's
`identity_hash` is updated and a decision event naming the approver and the reason
is appended to the log — so the manifest never disagrees with identity/ in history.
"""

from __future__ import annotations

import re
from pathlib import Path

from git_gasp.base.errors import GaspError
from git_gasp.base.files import atomic_write, read_file
from git_gasp.protocol.identity import identity_hash, normalize_declared
from git_gasp.protocol.manifest import ManifestError, parse_manifest
from git_gasp.runtime.commit import commit_paths
from git_gasp.store.agentfs import AgentFileError, list_files, read_regular

_HASH_LINE = re.compile(r"^(\s*identity_hash\s*:\s*)(\"?)(?:sha256:)?[0-9A-Fa-f]*\2[ \t]*$", re.M)


def compute_identity_hash(root: Path, ident_rel: str = "identity") -> str:
    """SHA-256 over identity/ as the spec recipe prints it (paths as identity/<file>)."""
    try:
        files = list_files(Path(root), ident_rel)
    except AgentFileError as exc:
        raise GaspError(f"identity cannot be read: {exc}") from None
    if not files:
        raise GaspError(f"{ident_rel}/ holds no files")
    prefix = ident_rel.encode()
    return identity_hash([(b"identity" + rel[len(prefix):], read_file(p, root=root))
                          for rel, p in files])


def declared_identity_hash(root: Path):
    """(manifest, declared digest or None)."""
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


class _Writes:
    """Files written by an amend, with what they held before, so it can be undone."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.old: list[tuple[Path, bytes | None]] = []
        self.made_dirs: list[Path] = []

    def write(self, rel: str, data: bytes) -> None:
        path = self.root / rel
        missing = []
        for parent in path.parents:
            if parent == self.root or parent.exists():
                break
            missing.append(parent)
        for parent in reversed(missing):
            parent.mkdir()
            self.made_dirs.append(parent)
        try:
            before: bytes | None = read_file(path, root=self.root)
        except FileNotFoundError:
            before = None
        atomic_write(path, data, root=self.root)  # refuses a link on the way (UnsafePath)
        self.old.append((path, before))

    def undo(self) -> None:
        for path, before in reversed(self.old):
            if before is None:
                path.unlink(missing_ok=True)
            else:
                atomic_write(path, before, root=self.root)
        for directory in reversed(self.made_dirs):
            try:
                directory.rmdir()
            except OSError:
                pass


def _hash_with(root: Path, ident: str, changes: dict[str, bytes]) -> str:
    """The identity hash identity/ would have with `changes` written (nothing is written)."""
    try:
        files = {rel: read_file(p, root=root) for rel, p in list_files(root, ident)}
    except AgentFileError as exc:
        raise GaspError(f"identity cannot be read: {exc}") from None
    for rel, data in changes.items():
        files[Path(rel).as_posix().encode()] = data
    if not files:
        raise GaspError(f"{ident}/ holds no files")
    prefix = ident.encode()
    return identity_hash([(b"identity" + rel[len(prefix):], data)
                          for rel, data in sorted(files.items())])


def amend_identity(state, approver: str, reason: str,
                   changes: dict[str, bytes] | None = None) -> tuple[bytes, str, str]:
    """Write `changes` (paths under identity/), update AGENT.md, record the decision and
    commit the three together; return (commit id, old hash, new hash).

    The decision's checks (lease, policy, validation) run before any file is written;
    the files are replaced atomically and put back as they were if recording the
    decision then fails, so a refused amend leaves nothing on disk."""
    root = Path(state.root)
    if not approver or "\n" in approver:
        raise GaspError("an identity amend needs the approver's name (one line)")
    if not reason or "\n" in reason:
        raise GaspError("an identity amend needs a one-line reason")
    manifest, declared = declared_identity_hash(root)
    ident = manifest.locations["identity"]
    changes = dict(changes or {})
    for rel in changes:
        parts = Path(rel).parts
        if not parts or parts[0] != ident or ".." in parts or len(parts) < 2:
            raise GaspError(f"{rel} is not a file under {ident}/")
    new = _hash_with(root, ident, changes)
    if new == declared:
        raise GaspError(f"{ident}/ is unchanged (it already hashes to the declared "
                        f"{new[:12]}…); edit it first")
    try:
        agent_text = read_regular(root, "AGENT.md").decode("utf-8")
    except (AgentFileError, UnicodeDecodeError) as exc:
        raise GaspError(f"AGENT.md: {exc}") from None
    agent_md = set_manifest_hash(agent_text, new).encode("utf-8")
    # the commit must pass the guard: refuse before writing anything when what is on
    # disk already would not (an in-place edit of the log, a link on the way, ...)
    commit_paths(root, [ident, "AGENT.md", state.store.rel], b"", log_rel=state.store.rel,
                 dry_run=True)
    writes = _Writes(root)
    log_lines: list[int] = []

    def write_files() -> None:  # every check passed: now the amend goes to disk
        log_lines.append(state.store.line_count)
        for rel, data in changes.items():
            writes.write(rel, data)
        writes.write("AGENT.md", agent_md)

    try:
        state.record_decision("Approved", reason, decided_by=("user", approver),
                              metadata={"identity_hash_from": declared, "identity_hash_to": new,
                                        "subject": "identity"},
                              before_append=write_files)
    except BaseException:
        # undo unless the decision reached the log (then a behaviour failed after it, and
        # the files must keep matching what the log records)
        if not log_lines or state.store.line_count == log_lines[0]:
            writes.undo()
        raise
    message = (f"identity: {reason}\n\nApproved-by: {approver}\n"
               f"Identity-Hash: {new}\n").encode()
    commit = commit_paths(root, [ident, "AGENT.md", state.store.rel], message,
                          log_rel=state.store.rel)
    return commit, declared or "", new
