"""Per-process indexes over the fold, kept across calls and brought up to date cheaply.

`Adjacency`: the relations by source and by target, so a lineage or the ready queue
looks at a node's own relations instead of scanning all of them. The fold only appends
to the graph's relation list (CreateRelation) or replaces the list (DeleteRelation), so
the index extends itself by the new tail while the list is the same object, and is
rebuilt when it was replaced (the old list is kept referenced, so its identity cannot
be reused).

`Texts`: each node's search text, kept with the props object it was made from; the
fold replaces a node's props with a new dict on every change (`protocol.fold`), so a
text is current exactly while its node still holds that same dict.
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


class Texts:
    """Search text by node id, each valid while its node keeps the same props dict."""

    def __init__(self) -> None:
        self._texts: dict[str, tuple[dict, str]] = {}

    def of(self, node: dict) -> str:
        props = node["props"]
        hit = self._texts.get(node["id"])
        if hit is not None and hit[0] is props:
            return hit[1]
        parts = [node["id"], *(v for v in props.values() if isinstance(v, str))]
        text = "\n".join(parts).lower()
        self._texts[node["id"]] = (props, text)
        return text
