"""The seven graph ops of `state.ops_applied` payloads: shape validation.

Ops are externally tagged: {"CreateNode": {...}}. `parse_ops` turns a payload into
a list of (tag, body) pairs or raises OpError naming the op index and the field.
"""

from __future__ import annotations

from typing import Any

from git_gasp.base.errors import FormatError

# tag -> {field: allowed types}; None stands for JSON null.
_STR = (str,)
_OBJ = (dict,)
OP_FIELDS: dict[str, dict[str, tuple]] = {
    "CreateNode": {"id": _STR, "kind": _STR, "props": _OBJ},
    "UpdateNode": {"id": _STR, "props": _OBJ},
    "TombstoneNode": {"id": _STR, "reason": _STR},
    "CreateRelation": {"from": _STR, "rel": _STR, "to": _STR, "props": _OBJ},
    "DeleteRelation": {"from": _STR, "rel": _STR, "to": _STR},
    "MarkStale": {"id": _STR, "reason": _STR},
    "AttachArtifact": {"id": _STR, "artifact": _OBJ},
}
ARTIFACT_FIELDS: dict[str, tuple] = {
    "kind": _STR,
    "uri": _STR,
    "hash": (str, type(None)),
    "summary": (str, type(None)),
    "metadata": _OBJ,
}
_TYPE_NAMES = {str: "a string", dict: "an object", type(None): "null"}
# Ops that modify an existing node: a missing target is a dangling op.
NEEDS_NODE = frozenset({"UpdateNode", "TombstoneNode", "MarkStale", "AttachArtifact"})


class OpError(FormatError):
    """An ops payload (or one op in it) does not have the reference shape."""


def _check_fields(body: Any, fields: dict[str, tuple], what: str) -> None:
    if type(body) is not dict:
        raise OpError(f"{what} must be an object")
    if body.keys() != fields.keys():
        missing = [k for k in fields if k not in body]
        unknown = sorted(k for k in body if k not in fields)
        parts = []
        if missing:
            parts.append("missing " + ", ".join(missing))
        if unknown:
            parts.append("unknown " + ", ".join(unknown))
        raise OpError(f"{what}: " + "; ".join(parts))
    for name, types in fields.items():
        if type(body[name]) not in types:
            expected = " or ".join(_TYPE_NAMES[t] for t in types)
            raise OpError(f"{what}.{name} must be {expected}")


def parse_op(op: Any) -> tuple[str, dict]:
    """Validate one externally tagged op; return (tag, body)."""
    if type(op) is not dict or len(op) != 1:
        raise OpError("an op must be an object with exactly one op name")
    ((tag, body),) = op.items()
    fields = OP_FIELDS.get(tag)
    if fields is None:
        raise OpError(f"unknown op {tag!r}")
    _check_fields(body, fields, tag)
    if tag == "AttachArtifact":
        _check_fields(body["artifact"], ARTIFACT_FIELDS, "AttachArtifact.artifact")
    return tag, body


def parse_ops(payload: Any) -> list[tuple[str, dict]]:
    """Validate a whole `state.ops_applied` payload (a list of ops)."""
    if type(payload) is not list:
        raise OpError("the payload of state.ops_applied must be an array of ops")
    out = []
    for i, op in enumerate(payload):
        try:
            out.append(parse_op(op))
        except OpError as exc:
            raise OpError(f"op #{i + 1}: {exc}") from None
    return out
