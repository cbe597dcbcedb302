"""AGENT.md: the manifest, as YAML front matter or the first fenced ```yaml block.

Fields: spec_version, agent_id, identity_hash, executor, and optional `locations`
(identity, memory, log) — also read from a Markdown "Locations" table.
"""

from __future__ import annotations

import re
from typing import Any

from git_gasp.base.errors import FormatError
from git_gasp.base.record import Record
from git_gasp.base.yamlread import load_yaml
from git_gasp.protocol.appendonly import AppendOnlyPaths

# The control plane's machine-local files (spec Part I: LOCAL-ONLY, gitignored): never
# committed, as `.agent/<name>` below an agent root.
AGENT_DIR, LOCAL_ONLY = b".agent", (b"lease", b"HEAD")
DEFAULT_LOCATIONS = {"identity": "identity", "memory": "memory", "log": "state/events.jsonl"}
_FENCE = re.compile(r"(?ms)^```ya?ml[ \t]*\n(.*?)^```[ \t]*$")
_FRONT_END = re.compile(r"(?m)^---[ \t]*$")
_LOCATIONS = re.compile(r"(?im)^#+\s*Locations\s*$")
_HEADING = re.compile(r"(?m)^#+\s")
_TABLE_ROW = re.compile(r"(?m)^\|\s*`?([A-Za-z_ ]+?)`?\s*\|\s*`?([^|`]+?)`?\s*\|")


class ManifestError(FormatError):
    """AGENT.md cannot be read as a manifest."""


class Manifest(Record):
    """What AGENT.md declares (`raw`: its whole YAML mapping)."""

    FIELDS = ("spec_version", "agent_id", "identity_hash", "executor", "locations", "raw")

    def __init__(self, spec_version: Any, agent_id: str, identity_hash: str | None,
                 executor: Any, locations: dict[str, str] | None = None,
                 raw: dict | None = None) -> None:
        self.spec_version, self.agent_id = spec_version, agent_id
        self.identity_hash, self.executor = identity_hash, executor
        self.locations = dict(DEFAULT_LOCATIONS) if locations is None else locations
        self.raw = {} if raw is None else raw


def _yaml_block(text: str) -> str:
    if text.startswith("---"):
        end = _FRONT_END.search(text[3:])
        if end is None:
            raise ManifestError("front matter starts with --- but never closes")
        return text[3 : 3 + end.start()]
    match = _FENCE.search(text)
    if match is None:
        raise ManifestError("no YAML front matter and no ```yaml block")
    return match.group(1)


def _safe_relpath(value: str, key: str) -> str:
    value = value.strip().strip("/")
    parts = value.split("/")
    if not value or value.startswith("~") or any(p in ("", "..") for p in parts):
        raise ManifestError(f"location {key!r} must be a relative path inside the repo")
    return value


def _locations(data: dict, text: str) -> dict[str, str]:
    locs = dict(DEFAULT_LOCATIONS)
    declared = data.get("locations")
    if declared is not None:
        if not isinstance(declared, dict):
            raise ManifestError("`locations` must be a mapping")
        for key, value in declared.items():
            if key in locs:
                if not isinstance(value, str):
                    raise ManifestError(f"location {key!r} must be a path")
                locs[key] = _safe_relpath(value, key)
        return locs
    heading = _LOCATIONS.search(text)
    if heading:
        for key, value in _TABLE_ROW.findall(text[heading.end() :]):
            key = key.strip().lower()
            if key in locs:
                locs[key] = _safe_relpath(value, key)
    return locs


def parse_manifest(data: bytes) -> Manifest:
    """Parse AGENT.md bytes (raises ManifestError with a one-line reason)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ManifestError(f"AGENT.md is not UTF-8 (byte {exc.start})") from None
    text = text.lstrip("\ufeff").replace("\r\n", "\n")
    block = _yaml_block(text)
    doc = load_yaml(block, "manifest YAML", ManifestError)
    if not isinstance(doc, dict):
        raise ManifestError("manifest YAML must be a mapping")
    missing = [k for k in ("spec_version", "agent_id") if doc.get(k) in (None, "")]
    if missing:
        raise ManifestError("manifest lacks " + " and ".join(missing))
    if not isinstance(doc["agent_id"], str):
        raise ManifestError("agent_id must be a string")
    ih = doc.get("identity_hash")
    return Manifest(
        spec_version=doc["spec_version"],
        agent_id=doc["agent_id"],
        identity_hash=None if ih is None else str(ih),
        executor=doc.get("executor"),
        locations=_locations(doc, text),
        raw=doc,
    )


APPEND_ONLY_ROLES = ("log", "facts", "journal")
_ROW = re.compile(r"(?m)^\|(.*)\|[ \t]*$")


def _cell(text: str) -> str:
    return text.strip().strip("`").strip()


def _path_or_none(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    try:
        return _safe_relpath(value, "path")
    except ManifestError:
        return None


def append_only_locations(data: bytes) -> tuple[dict[str, str], frozenset[str]]:
    """What check 4 reads of AGENT.md bytes: the append-only roles it moves (``log``,
    ``facts``, ``journal`` -> path) and the further paths it declares append-only.

    YAML ``locations`` (``log:``/``facts:``/``journal:`` and an ``append_only:`` list),
    else the Markdown Locations table: a ``log``/``facts``/``journal`` row moves that
    role, and a row whose other cells say "append-only" declares its path. Lenient:
    a manifest that does not parse, or a bad path, declares nothing (the defaults).
    """
    try:
        manifest = parse_manifest(data)
    except (ManifestError, UnicodeError, RecursionError, ValueError):
        return {}, frozenset()
    roles: dict[str, str] = {}
    declared: set[str] = set()
    locs = manifest.raw.get("locations")
    if isinstance(locs, dict):
        for key in APPEND_ONLY_ROLES:
            path = _path_or_none(locs.get(key))
            if path is not None:
                roles[key] = path
        extra = locs.get("append_only")
        for value in extra if isinstance(extra, list) else ():
            path = _path_or_none(value)
            if path is not None:
                declared.add(path)
        return roles, frozenset(declared)
    if locs is not None:
        return roles, frozenset(declared)
    text = data.decode("utf-8", "replace").replace("\r\n", "\n")
    heading = _LOCATIONS.search(text)
    if heading is None:
        return roles, frozenset(declared)
    after = text[heading.end():]
    end = _HEADING.search(after)  # the table ends with the section
    for row in _ROW.findall(after[:end.start()] if end else after):
        cells = [_cell(c) for c in row.split("|")]
        if len(cells) < 2 or set(cells[1]) <= set("-: "):
            continue
        key, path = cells[0].lower(), _path_or_none(cells[1])
        if path is None:
            continue
        if key in APPEND_ONLY_ROLES:
            roles[key] = path
        elif any("append-only" in c.lower() or "append only" in c.lower()
                 for c in [cells[0], *cells[2:]]):
            declared.add(path)
    return roles, frozenset(declared)


def manifest_paths(data: bytes | None, extra: frozenset[bytes] = frozenset()) -> AppendOnlyPaths:
    """The append-only paths of a commit whose AGENT.md holds `data` (None: no
    manifest; the defaults), plus `extra` (paths declared from outside)."""
    if data is None or (b"ocations" not in data and b"append_only" not in data):
        return AppendOnlyPaths(declared=extra)  # the fast path: nothing moved, no YAML
    roles, declared = append_only_locations(data)
    return AppendOnlyPaths({k: v.encode() for k, v in roles.items()},
                           extra | {p.encode() for p in declared})
