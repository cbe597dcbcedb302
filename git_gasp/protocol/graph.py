"""The folded graph and its JSON form (snapshots, `git gasp fold --json`).

Graph JSON: {"nodes": {id: {"id","kind","props","stale","tombstoned","artifacts"}},
"relations": [{"from","rel","to","props"}], "version": N}.
"""

from __future__ import annotations

from typing import Any

from git_gasp.protocol.jsonstrict import json_equal


class GraphError(ValueError):
    """A graph JSON document does not have the expected shape."""


def _bad_node(key: str, node: Any) -> None:
    if type(node) is not dict or node.get("id") != key:
        raise GraphError(f"graph node {key!r} is malformed")
    raise GraphError(f"graph node {key!r} needs kind (string), props (object), artifacts "
                     "(array), stale and tombstoned (booleans)")


class Graph:
    """Nodes keyed by id, relations in creation order, and the count of applied ops."""

    __slots__ = ("nodes", "relations", "version")

    def __init__(self) -> None:
        self.nodes: dict[str, dict[str, Any]] = {}
        self.relations: list[dict[str, Any]] = []
        self.version = 0

    def to_json(self) -> dict:
        """The graph as a JSON-ready object."""
        return {"nodes": self.nodes, "relations": self.relations, "version": self.version}

    @classmethod
    def from_json(cls, obj: Any, *, copy: bool = True) -> Graph:
        """Load a graph from its JSON form (raises GraphError).

        copy=False adopts obj's node records and relations list instead of copying them:
        for a freshly parsed document that nothing else holds (a snapshot being opened).
        """
        if type(obj) is not dict or not {"nodes", "relations", "version"} <= obj.keys():
            raise GraphError('a graph must be an object with "nodes", "relations", "version"')
        nodes, relations, version = obj["nodes"], obj["relations"], obj["version"]
        if type(nodes) is not dict or type(relations) is not list or type(version) is not int:
            raise GraphError("graph nodes must be an object, relations an array, version an int")
        for key, node in nodes.items():
            if (type(node) is not dict or type(node.get("props")) is not dict
                    or type(node.get("artifacts")) is not list or node.get("id") != key
                    or type(node.get("kind")) is not str
                    or type(node.get("stale")) is not bool
                    or type(node.get("tombstoned")) is not bool):
                _bad_node(key, node)
        for rel in relations:
            if (type(rel) is not dict or type(rel.get("from")) is not str
                    or type(rel.get("rel")) is not str or type(rel.get("to")) is not str):
                raise GraphError("every graph relation needs from, rel and to (strings)")
        graph = cls()
        if copy:
            graph.nodes = {k: dict(v) for k, v in nodes.items()}
            graph.relations = list(relations)
        else:
            graph.nodes = nodes
            graph.relations = relations
        graph.version = version
        return graph

    def copy(self) -> Graph:
        """A copy safe to fold further (node records copied; nested values shared)."""
        other = Graph()
        other.nodes = {
            k: {**v, "artifacts": list(v["artifacts"])} for k, v in self.nodes.items()
        }
        other.relations = list(self.relations)
        other.version = self.version
        return other

    def same_as(self, other: Graph) -> bool:
        """Structural equality of two graphs (relation order matters)."""
        return json_equal(self.to_json(), other.to_json())

    # --- queries -------------------------------------------------------------
    def outgoing(self, node_id: str, rel: str | None = None) -> list[dict]:
        """Relations whose `from` is node_id (optionally of one type)."""
        return [r for r in self.relations if r["from"] == node_id and rel in (None, r["rel"])]

    def incoming(self, node_id: str, rel: str | None = None) -> list[dict]:
        """Relations whose `to` is node_id (optionally of one type)."""
        return [r for r in self.relations if r["to"] == node_id and rel in (None, r["rel"])]

    def has_relation(self, src: str, rel: str, dst: str) -> bool:
        return any(r["from"] == src and r["rel"] == rel and r["to"] == dst for r in self.relations)
