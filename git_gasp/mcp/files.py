"""The agent's files the server offers as resources: active memory and identity/.

Their bytes are given as they are: text when they are UTF-8, else the bytes
themselves (a blob), never re-encoded."""

from __future__ import annotations

from pathlib import Path

from git_gasp.base.errors import GaspError
from git_gasp.protocol.manifest import DEFAULT_LOCATIONS, parse_manifest
from git_gasp.store.agentfs import AgentFileError, file_paths, read_regular
from git_gasp.store.location import MANIFEST


def identity_dir(root: Path) -> str:
    """The identity directory AGENT.md names (``identity`` by default)."""
    try:
        manifest = parse_manifest(read_regular(root, MANIFEST))
    except (AgentFileError, GaspError):
        return DEFAULT_LOCATIONS["identity"]
    return manifest.locations.get("identity", DEFAULT_LOCATIONS["identity"])


def identity_files(root: Path) -> list[str]:
    """The paths (relative to `root`, with '/') of the regular files under identity/."""
    try:
        return [rel.decode("utf-8", "surrogateescape")
                for rel, _path in file_paths(root, identity_dir(root))]
    except (AgentFileError, OSError):
        return []


def read_identity(root: Path, name: str) -> bytes:
    """identity/<name>, refused unless it is one of `identity_files`."""
    rel = f"{identity_dir(root)}/{name}"
    if rel not in identity_files(root):
        raise GaspError(f"no identity file {name!r}")
    try:
        return read_regular(root, rel)
    except AgentFileError as exc:
        raise GaspError(str(exc)) from None


def as_content(data: bytes) -> str | bytes:
    """UTF-8 text as a str, anything else as the bytes themselves."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data
