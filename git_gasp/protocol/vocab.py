"""The baseline vocabulary of Part I and vocabulary packs (.agent/packs/*.json)."""

from __future__ import annotations

from typing import Any

from git_gasp.base.errors import FormatError
from git_gasp.base.record import Record

BASE_NODE_KINDS = frozenset(
    {
        "goal",
        "task",
        "run",
        "observation",
        "failure",
        "hypothesis",
        "patch",
        "eval",
        "decision",
        "model_call",
        "tool_call",
        "frame",
        "project_snapshot",
        "policy",
        "behavior",
    }
)

BASE_RELATIONS = frozenset(
    {
        "serves",
        "blocks",
        "advances",
        "observes",
        "explains",
        "addresses",
        "modifies",
        "validated_by",
        "approved_by",
        "rejected_by",
        "produced_by",
        "derived_from",
        "depends_on",
        "supersedes",
        "contained_in_frame",
        "forked_from",
        "references",
    }
)

# Entity-creating domain event kind -> the node kind its paired CreateNode must use.
ENTITY_CREATING: dict[str, str] = {
    "goal.created": "goal",
    "task.created": "task",
    "observation.created": "observation",
    "failure.observed": "failure",
    "hypothesis.created": "hypothesis",
    "patch.proposed": "patch",
    "eval.finished": "eval",
    "decision.created": "decision",
    "frame.created": "frame",
}


class PackError(FormatError):
    """A pack file does not have the reference shape."""


class Pack(Record):
    """A vocabulary pack: extra node kinds (`object_types`: kind -> required props)
    and relation types."""

    FIELDS = ("name", "object_types", "relation_types")

    def __init__(self, name: str, object_types: dict[str, list[str]] | None = None,
                 relation_types: frozenset[str] = frozenset()) -> None:
        self.name = name
        self.object_types = {} if object_types is None else object_types
        self.relation_types = relation_types


def parse_pack(obj: Any, name: str) -> Pack:
    """Validate a parsed pack document (raises PackError naming the bad field)."""
    if type(obj) is not dict:
        raise PackError("a pack must be a JSON object")
    object_types = obj.get("object_types", {})
    relation_types = obj.get("relation_types", {})
    if type(object_types) is not dict:
        raise PackError("`object_types` must be an object keyed by node kind")
    if type(relation_types) is not dict:
        raise PackError("`relation_types` must be an object keyed by relation type")
    kinds: dict[str, list[str]] = {}
    for kind, spec in object_types.items():
        if type(spec) is not dict:
            raise PackError(f"object_types.{kind} must be an object")
        if "kind" in spec and spec["kind"] != kind:
            raise PackError(f"object_types.{kind}.kind is {spec['kind']!r}, not {kind!r}")
        required = spec.get("required_props", [])
        if type(required) is not list or any(type(p) is not str for p in required):
            raise PackError(f"object_types.{kind}.required_props must be a list of strings")
        kinds[kind] = required
    for rel, spec in relation_types.items():
        if type(spec) is not dict:
            raise PackError(f"relation_types.{rel} must be an object")
        if "rel" in spec and spec["rel"] != rel:
            raise PackError(f"relation_types.{rel}.rel is {spec['rel']!r}, not {rel!r}")
    label = obj.get("name") if type(obj.get("name")) is str else name
    return Pack(label, kinds, frozenset(relation_types))


class Vocabulary(Record):
    """The kinds and relations a repo may use: the baseline plus its packs."""

    FIELDS = ("node_kinds", "relations", "required_props")

    def __init__(self, node_kinds: frozenset[str] = BASE_NODE_KINDS,
                 relations: frozenset[str] = BASE_RELATIONS,
                 required_props: dict[str, list[str]] | None = None) -> None:
        self.node_kinds, self.relations = node_kinds, relations
        self.required_props = {} if required_props is None else required_props

    @classmethod
    def with_packs(cls, packs: list[Pack]) -> Vocabulary:
        kinds = set(BASE_NODE_KINDS)
        rels = set(BASE_RELATIONS)
        required: dict[str, list[str]] = {}
        for pack in packs:
            kinds.update(pack.object_types)
            rels.update(pack.relation_types)
            for kind, props in pack.object_types.items():
                required.setdefault(kind, [])
                required[kind] += [p for p in props if p not in required[kind]]
        return cls(frozenset(kinds), frozenset(rels), required)


# Payload fields whose type every reader relies on (the lineage views, check 7, the
# reference runtime's typed payloads). Null is always allowed: optional fields are.
_TEXT_FIELDS = frozenset({"title", "summary", "statement", "command", "reason", "source",
                          "task", "tool", "model", "input_summary", "output_summary",
                          "outcome", "status", "run_id", "goal_id", "task_id"})
_NUMBER_FIELDS = frozenset({"score"})
_BOOL_FIELDS = frozenset({"success"})
_OBJECT_FIELDS = frozenset({"metadata"})


def payload_problem(kind: str, payload: object) -> str | None:
    """Why a domain event's `payload` has a known field of the wrong type (naming it),
    or None. Entity-creating events need an object payload with a string `id`."""
    if kind == "state.ops_applied":
        return None
    if type(payload) is not dict:
        return "payload: must be a JSON object" if kind in ENTITY_CREATING else None
    if kind in ENTITY_CREATING and (type(payload.get("id")) is not str or not payload["id"]):
        return "payload.id: must be a non-empty string (the id of the entity created)"
    for name, value in payload.items():
        if value is None:
            continue
        if name in _TEXT_FIELDS and type(value) is not str:
            return f"payload.{name}: must be a string"
        if name in _NUMBER_FIELDS and type(value) not in (int, float):
            return f"payload.{name}: must be a number"
        if name in _BOOL_FIELDS and type(value) is not bool:
            return f"payload.{name}: must be true or false"
        if name in _OBJECT_FIELDS and type(value) is not dict:
            return f"payload.{name}: must be a JSON object"
    return None
