"""The fold the server answers from: opened once per process, followed as the log grows.

`Service.state()` first records what the agent hooks queued (`live.drain_pending`, from
the directory the server started in), then folds whatever was appended since the last
call (`AgentState.refresh` reads only the new bytes) before each answer, so a tool sees
events the hooks or the CLI wrote after the server started; a log rewritten under us (a
sync that replaced it, a checkout) is opened afresh, once. Calls come from the SDK's
worker threads: one lock keeps them one at a time over the shared state.

Ids are typed as on the command line: a unique prefix, or ``kind_...tail`` as the
commands print them (`protocol.idmatch`). An unknown or ambiguous id is a UsageError
(one line), which the server answers as a tool error.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path

from git_gasp.adapters.live import drain_pending
from git_gasp.base.errors import GaspError, UsageError
from git_gasp.mcp.adjacency import Adjacency
from git_gasp.protocol.idmatch import match_id
from git_gasp.runtime.queries import lineage
from git_gasp.runtime.state import AgentState

QUEUE_WAIT_S = 5.0  # for a drainer at work, before an answer


class Service:
    """The agent's state for one server process."""

    def __init__(self, root: str | Path, worker_id: str | None = None,
                 start: str | Path | None = None) -> None:
        self.root = Path(root)
        self.start = Path(start) if start is not None else self.root
        self.worker_id = worker_id
        self.lock = threading.RLock()
        self._state = AgentState.open(self.root, worker_id)
        self.adjacency = Adjacency()  # kept across calls, brought up to date by each

    def state(self) -> AgentState:
        """The fold with every event appended so far, the hooks' queue recorded first
        (call holding `lock`)."""
        drain_pending(self.start, lock_wait_s=QUEUE_WAIT_S)
        try:
            self._state.refresh()
        except GaspError:  # the log shrank or was rewritten: fold it again, once
            self._state = AgentState.open(self.root, self.worker_id)
            self.adjacency = Adjacency()
        return self._state

    def lineage(self, node_id: str, depth: int) -> dict:
        """`AgentState.lineage` through the kept index; the node itself as `node`."""
        graph = self._state.graph
        index = self.adjacency.update(graph)
        out = lineage(graph, node_id, depth, (index.out_by, index.in_by)).to_json()
        out["node"] = graph.node(node_id)
        return out

    def node_id(self, text: object, *kinds: str, what: str = "id") -> str:
        """The full id of the node `text` names (of `kinds`, when given)."""
        graph = self._state.graph
        if not isinstance(text, str) or not text.strip():
            raise UsageError(f"{what} must be a node id (or a unique prefix of one)")
        text = text.strip()
        if graph.has_node(text):  # a full id: no scan of every id for prefixes
            full = text
        else:
            full = self._match(text, kinds, what)
        node = graph.node(full)
        if node is None:
            raise UsageError(f"no node {text!r} in the graph")
        if kinds and node["kind"] not in kinds:
            raise UsageError(f"{full} is a {node['kind']}, not a {' or '.join(kinds)}")
        return full

    def _match(self, text: str, kinds: tuple[str, ...], what: str) -> str:
        graph = self._state.graph

        def of_kind(node_id: str) -> bool:
            return (graph.node(node_id) or {}).get("kind") in kinds

        return match_id(graph.node_ids(), text, what, keep=of_kind if kinds else None)

    def source_ids(self, texts: Iterable[object]) -> list[str]:
        """Each of `texts` as the full id of the node or event it names (a fact's
        derived_from); the first one that names neither is a UsageError."""
        out = []
        state = self._state
        for text in texts:
            if not isinstance(text, str) or not text.strip():
                raise UsageError("derived_from holds event or node ids")
            text = text.strip()
            full = text if state.graph.has_node(text) else \
                match_id(state.graph.node_ids(), text, "node")
            if state.graph.has_node(full):
                out.append(full)
                continue
            if state.has_event(text):
                out.append(text)
                continue
            full = match_id(state.event_ids(), text, "event")
            if full == text:
                raise UsageError(f"derived_from names {text!r}, which is neither an event "
                                 "nor a node of the log")
            out.append(full)
        if not out:
            raise UsageError("derived_from needs at least one event or node id: what the "
                             "fact was learned from")
        return out
