"""The folded graph and its JSON form (snapshots, `git gasp fold --json`).

Graph JSON: {"nodes": {id: {"id","kind","props","stale","tombstoned","artifacts"}},
"relations": [{"from","rel","to","props"}], "version": N}.
"""

from __future__ import annotations

import marshal
from collections.abc import Iterator
from typing import Any

from git_gasp.base.errors import FormatError
from git_gasp.protocol.jsonstrict import json_equal


class GraphError(FormatError):
    """A graph JSON document does not have the expected shape."""


def _bad_node(key: str, node: Any) -> None:
    if type(node) is not dict or node.get("id") != key:
        raise GraphError(f"graph node {key!r} is malformed")
    raise GraphError(f"graph node {key!r} needs kind (string), props (object), artifacts "
                     "(array), stale and tombstoned (booleans)")


class Graph:
    """Nodes keyed by id, relations in creation order, and the count of applied ops.

    A graph loaded from the verified snapshot cache (`Graph.lazy`) keeps each node as its
    marshalled bytes (the value in `_nodes` is the node's position in `_blob`) and the
    relations as one marshalled blob until they are needed:
    `node()`, `has_node()`, `put_node()`, `add_relation()`, `node_ids()` and
    `node_count()` work without building the rest of the graph; the `nodes` and
    `relations` properties (and everything built on them: `to_json`, `copy`, the
    queries) build all of it first, so no caller ever sees a partly loaded graph.
    Nodes keep their order (a node's bytes are replaced by its record in place).
    """

    __slots__ = ("_nodes", "_lazy", "_hot", "_blob", "_ends", "_rels", "_rels_blob",
                 "_rels_add", "version")

    def __init__(self) -> None:
        self._nodes: dict[str, Any] = {}
        self._lazy = False  # some values of _nodes may still be marshalled bytes
        self._hot: list[str] = []  # ids loaded or (re)created since a lazy load
        self._blob: Any = None  # the marshalled nodes, back to back
        self._ends: Any = None  # end offset of node i in _blob (a sequence of ints)
        self._rels: list[dict[str, Any]] | None = []
        self._rels_blob: bytes | None = None
        self._rels_add: list[dict[str, Any]] = []  # appended before _rels was loaded
        self.version = 0

    @classmethod
    def lazy(cls, index: dict[str, int], blob: Any, ends: Any, relations: Any,
             version: int) -> Graph:
        """A graph over marshalled nodes and relations, each unmarshalled when first
        needed: node `id` is marshal bytes blob[ends[i - 1]:ends[i]] for i = index[id]
        (ids in node order), relations are marshal.dumps(list)."""
        graph = cls()
        graph._nodes = index
        graph._blob, graph._ends = blob, ends
        graph._lazy = bool(index)
        graph._rels = None
        graph._rels_blob = relations
        graph.version = version
        return graph

    # --- nodes -----------------------------------------------------------------
    @property
    def nodes(self) -> dict[str, dict[str, Any]]:
        """Every node by id (loads all of them first)."""
        if self._lazy:
            nodes = self._nodes
            for key, value in nodes.items():
                if type(value) is int:
                    nodes[key] = self._load(value)
            self._lazy = False
            self._hot = []
            self._blob = self._ends = None
        return self._nodes

    @nodes.setter
    def nodes(self, value: dict[str, dict[str, Any]]) -> None:
        self._nodes = value
        self._lazy = False
        self._hot = []
        self._blob = self._ends = None

    @property
    def is_lazy(self) -> bool:
        """Whether some nodes are still unloaded (see `touched`)."""
        return self._lazy

    def touched(self) -> list[str]:
        """Ids of nodes loaded or (re)created since the lazy load (while `is_lazy`): all
        the others are exactly as the snapshot had them."""
        return self._hot

    def node(self, node_id: str) -> dict[str, Any] | None:
        """The node record (mutable, the graph's own), or None."""
        value = self._nodes.get(node_id)
        if type(value) is int:
            value = self._nodes[node_id] = self._load(value)
            self._hot.append(node_id)
        return value

    def _load(self, i: int) -> dict[str, Any]:
        ends = self._ends
        return marshal.loads(self._blob[ends[i - 1] if i else 0 : ends[i]])

    def has_node(self, node_id: str) -> bool:
        return node_id in self._nodes

    def put_node(self, node_id: str, record: dict[str, Any]) -> None:
        """Set a node's record (a new id goes last; an existing one keeps its place)."""
        self._nodes[node_id] = record
        if self._lazy:
            self._hot.append(node_id)

    def node_ids(self) -> Iterator[str]:
        """Node ids in order, without loading the nodes."""
        return iter(self._nodes)

    def node_count(self) -> int:
        return len(self._nodes)

    def iter_nodes(self) -> Iterator[dict[str, Any]]:
        """Every node record in order (loads all of them first)."""
        return iter(self.nodes.values())

    # --- relations -------------------------------------------------------------
    @property
    def relations(self) -> list[dict[str, Any]]:
        """Every relation in creation order (loads them first)."""
        rels = self._rels
        if rels is None:
            rels = marshal.loads(self._rels_blob) if self._rels_blob is not None else []
            rels.extend(self._rels_add)
            self._rels, self._rels_blob, self._rels_add = rels, None, []
        return rels

    @relations.setter
    def relations(self, value: list[dict[str, Any]]) -> None:
        self._rels, self._rels_blob, self._rels_add = value, None, []

    def add_relation(self, relation: dict[str, Any]) -> None:
        """Append a relation (without loading the others)."""
        if self._rels is None:
            self._rels_add.append(relation)
        else:
            self._rels.append(relation)

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
