"""The `kg save` document: parsing and validating it (no files, no git).

    summary: what this save records          # commit message: `perstate: <summary>`
    date: 2026-07-15                         # optional; defaults to today (UTC)
    entities:
      - id: llm-evaluation                   # optional when label is given
        label: LLM Evaluation
        type: domain                         # required to create
        aliases: [model benchmarking]
        sources: ["arxiv:2505.20416"]
        body: "Markdown …"                   # new: the body; merge: a dated ### subsection
        fields: {confidence: high}           # any other front-matter fields
        action: upsert                       # upsert (default) | supersede | delete
        dedupe: true                         # false: match by id only
    relations:
      - {from: llm-evaluation, type: depends-on, to: harness, body: "…", sources: [...]}
      - {from: a, type: enables, to: b, action: supersede}   # valid_until: <date>
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any

import orjson

from git_gasp.base.errors import GaspError, UsageError
from git_gasp.base.yamlread import load_yaml

ENTITY_ITEM_KEYS = {"id", "label", "type", "aliases", "sources", "body", "fields", "action",
                    "dedupe", "valid_until"}
RELATION_ITEM_KEYS = {"from", "to", "type", "sources", "body", "fields", "action",
                      "valid_until"}
ACTIONS = {"upsert", "supersede", "delete"}
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def load_document(text: str) -> dict[str, Any]:
    """Parse and validate a save document (YAML or JSON)."""
    stripped = text.lstrip()
    if not stripped:
        raise UsageError("the save document is empty")
    if stripped.startswith(("{", "[")):
        try:
            doc = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise UsageError(f"invalid JSON document: {exc}") from None
    else:
        try:
            doc = load_yaml(text)
        except GaspError as exc:
            raise UsageError(str(exc)) from None
    if not isinstance(doc, dict):
        raise UsageError("the save document must be a mapping with `entities` and/or `relations`")
    unknown = set(doc) - {"summary", "date", "entities", "relations"}
    if unknown:
        raise UsageError(f"unknown top-level key(s) in the document: {', '.join(sorted(unknown))}")
    for key, allowed in (("entities", ENTITY_ITEM_KEYS), ("relations", RELATION_ITEM_KEYS)):
        items = doc.get(key) or []
        if not isinstance(items, list):
            raise UsageError(f"`{key}` must be a list")
        for n, item in enumerate(items, 1):
            if not isinstance(item, dict):
                raise UsageError(f"{key}[{n}] must be a mapping")
            bad = set(item) - allowed
            if bad:
                raise UsageError(
                    f"{key}[{n}]: unknown key(s) {', '.join(sorted(map(str, bad)))} "
                    "(put custom front-matter fields under `fields:`)"
                )
            action = item.get("action", "upsert")
            if action not in ACTIONS:
                raise UsageError(f"{key}[{n}]: action must be one of upsert, supersede, delete")
            if "fields" in item and not isinstance(item["fields"], dict):
                raise UsageError(f"{key}[{n}]: `fields` must be a mapping")
            reserved = {"id", "from", "to", "created_at", "updated_at"}
            if set(item.get("fields") or {}) & reserved:
                raise UsageError(f"{key}[{n}]: `fields` may not set {', '.join(sorted(reserved))}")
    if not doc.get("entities") and not doc.get("relations"):
        raise UsageError("the document has no `entities` or `relations`")
    date = doc.get("date")
    if date is not None and not (isinstance(date, str) and DATE_RE.match(date)):
        raise UsageError("`date` must be YYYY-MM-DD")
    summary = doc.get("summary")
    if summary is not None and not isinstance(summary, str):
        raise UsageError("`summary` must be a string")
    return doc


def today_utc() -> str:
    """Today's date in UTC, YYYY-MM-DD (a document's default `date`)."""
    return _dt.datetime.now(_dt.timezone.utc).date().isoformat()
