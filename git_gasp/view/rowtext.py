"""An event as the page lists it: one line of its fields for people (``title: Fix add ·
status: Proposed``; an ops event as its ops: ``CreateNode goal_… (goal); CreateRelation
run_… serves goal_…``), never the payload's raw JSON, and bounded."""

from __future__ import annotations

from typing import Any

DOMAIN_CHARS = 240  # of a domain event's line
OPS_CHARS = 160  # of an ops event's line
VALUE_CHARS = 120  # of one field's value
# Fields first when a payload has them (what a person looks for), then the others.
FIRST = ("title", "summary", "status", "outcome", "from", "to", "reason", "command", "tool",
         "model", "task", "score", "references_commit", "input_summary", "output_summary",
         "text", "error")
SKIPPED = frozenset({"id", "run_id", "metadata"})  # shown elsewhere (the node, the run)


def _value(value: Any) -> str:
    if isinstance(value, str):
        text = " ".join(value.split())
    elif isinstance(value, bool) or value is None:
        text = {True: "yes", False: "no", None: "-"}[value]
    elif isinstance(value, (int, float)):
        text = str(value)
    elif isinstance(value, dict):
        text = f"{len(value)} field{'' if len(value) == 1 else 's'}"
    elif isinstance(value, list):
        text = f"{len(value)} item{'' if len(value) == 1 else 's'}"
    else:
        text = str(value)
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def ops_line(payload: Any) -> str:
    """The ops of a ``state.ops_applied`` payload, one clause each."""
    if type(payload) is not list:
        return "(not a list of ops)"
    parts: list[str] = []
    size = 0
    for op in payload:
        if type(op) is not dict or len(op) != 1:
            parts.append("(malformed op)")
            continue
        ((name, body),) = op.items()
        if type(body) is not dict:
            parts.append(str(name))
        elif "from" in body and "to" in body and "id" not in body:
            parts.append(f"{name} {body.get('from')} {body.get('rel')} {body.get('to')}")
        else:
            kind = f" ({body['kind']})" if isinstance(body.get("kind"), str) else ""
            parts.append(f"{name} {body.get('id')}{kind}")
        size += len(parts[-1]) + 2
        if size > OPS_CHARS:
            break
    more = len(payload) - len(parts)
    line = "; ".join(parts) + (f"; {more} more" if more > 0 else "")
    return _cut(line, OPS_CHARS)


def fields_line(payload: Any) -> str:
    """A domain event's payload as ``name: value`` fields, the telling ones first."""
    if not isinstance(payload, dict):
        return _cut(_value(payload), DOMAIN_CHARS)
    keys = [k for k in FIRST if k in payload]
    keys += sorted(k for k in payload if k not in SKIPPED and k not in FIRST)
    out: list[str] = []
    size = 0
    for key in keys:
        value = payload[key]
        if value is None or value == "" or value == {} or value == []:
            continue
        out.append(f"{key}: {_value(value)}")
        size += len(out[-1]) + 3
        if size > DOMAIN_CHARS:
            break
    return _cut(" · ".join(out), DOMAIN_CHARS)
