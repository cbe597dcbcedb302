"""AGENT.md: the manifest, as YAML front matter or the first fenced ```yaml block.

Fields: spec_version, agent_id, identity_hash, executor, and optional `locations`
(identity, memory, log) — also read from a Markdown "Locations" table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from git_gasp.base.errors import FormatError

DEFAULT_LOCATIONS = {"identity": "identity", "memory": "memory", "log": "state/events.jsonl"}
_FENCE = re.compile(r"^```ya?ml[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
_TABLE_ROW = re.compile(r"^\|\s*`?([A-Za-z_ ]+?)`?\s*\|\s*`?([^|`]+?)`?\s*\|", re.M)


class ManifestError(FormatError):
    """AGENT.md cannot be read as a manifest."""


@dataclass
class Manifest:
    spec_version: Any
    agent_id: str
    identity_hash: str | None
    executor: Any
    locations: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_LOCATIONS))
    raw: dict = field(default_factory=dict)


def _yaml_block(text: str) -> str:
    if text.startswith("---"):
        end = re.search(r"^---[ \t]*$", text[3:], re.M)
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
    heading = re.search(r"^#+\s*Locations\s*$", text, re.M | re.I)
    if heading:
        for key, value in _TABLE_ROW.findall(text[heading.end() :]):
            key = key.strip().lower()
            if key in locs:
                locs[key] = _safe_relpath(value, key)
    return locs


def parse_manifest(data: bytes) -> Manifest:
    """Parse AGENT.md bytes (raises ManifestError with a one-line reason)."""
    import yaml

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ManifestError(f"AGENT.md is not UTF-8 (byte {exc.start})") from None
    text = text.lstrip("\ufeff").replace("\r\n", "\n")
    try:
        doc = yaml.safe_load(_yaml_block(text))
    except yaml.YAMLError as exc:
        raise ManifestError(f"manifest YAML does not parse: {str(exc).splitlines()[0]}") from None
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
