"""A per-process index over the fold, kept across calls and brought up to date cheaply.

`Adjacency`: the relations by source and by target, so a lineage or the ready queue
looks at a node's own relations instead of scanning all of them. The fold only appends
to the graph's relation list (CreateRelation) or replaces the list (DeleteRelation), so
the index extends itself by the new tail while the list is the same object, and is
rebuilt when it was replaced (the old list is kept referenced, so its identity cannot
be reused).
"""

from __future__ import annotations

from git_gasp.protocol.graph import Graph


class Adjacency:
    """Relations of a graph by `from` (`out_by`) and by `to` (`in_by`)."""

    def __init__(self) -> None:
        self._list: list | None = None
        self._seen = 0
        self.out_by: dict[str, list[dict]] = {}
        self.in_by: dict[str, list[dict]] = {}

    def update(self, graph: Graph) -> Adjacency:
        """Bring the index up to `graph`'s relations; return it."""
        rels = graph.relations
        if rels is not self._list or len(rels) < self._seen:
            self._list, self._seen = rels, 0
            self.out_by, self.in_by = {}, {}
        out_by, in_by = self.out_by, self.in_by
        for r in rels[self._seen:]:
            out_by.setdefault(r["from"], []).append(r)
            in_by.setdefault(r["to"], []).append(r)
        self._seen = len(rels)
        return self

