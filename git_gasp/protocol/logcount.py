"""One count of a log, in the same words for every command that reports it (`fold`,
`view`, `log --count`, `status`).

The log holds two layers (spec, Part I): the *domain* layer (every event but
``state.ops_applied``: goals, runs, tool and model calls, observations …, what `log`
shows) and the *ops* layer (``state.ops_applied``, what the fold applies, `log --ops`
adds them); *all* is both. A count names its layers: ``56 events (28 domain, 28 ops)``,
the graph's nodes (every node of the fold, whatever a page lists of them) and the last
event with its line and layer: ``last event_...14884b (line 56, ops)``, so an id any
command prints is found by `log` (with ``--ops`` when its layer is ops).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from git_gasp.protocol.envelope import OPS_KIND

LAYERS = ("domain", "ops", "all")


def layer_of(kind: str) -> str:
    """``ops`` for ``state.ops_applied``, else ``domain``."""
    return "ops" if kind == OPS_KIND else "domain"


def events_phrase(domain: int, ops: int) -> str:
    """``N events (D domain, O ops)``: how many events of each layer."""
    total = domain + ops
    return f"{total} event{'' if total == 1 else 's'} ({domain} domain, {ops} ops)"


class LogCount:
    """Events by layer, nodes, and the last event of one log (or log prefix)."""

    def __init__(self, events: Iterable[Any], nodes: int) -> None:
        self.domain = self.ops = 0
        last = None
        for e in events:
            if e.kind == OPS_KIND:
                self.ops += 1
            else:
                self.domain += 1
            last = e
        self.nodes = nodes
        self.last_id: str | None = last.id if last is not None else None
        self.last_line = last.line if last is not None else 0
        self.last_kind: str | None = last.kind if last is not None else None

    @classmethod
    def of(cls, domain: int, ops: int, nodes: int,
           last: tuple[str | None, int, str | None]) -> LogCount:
        """The count from its numbers (a saved count): `last` is (id, line, kind)."""
        count = cls((), nodes)
        count.domain, count.ops = domain, ops
        count.last_id, count.last_line, count.last_kind = last
        return count

    @property
    def all(self) -> int:
        return self.domain + self.ops

    @property
    def last_layer(self) -> str | None:
        return layer_of(self.last_kind) if self.last_kind is not None else None

    def last_phrase(self, short: Callable[[str], str] = str) -> str:
        """``last event_...tail (line N, LAYER)`` (`short` prints the id), or ``no event``."""
        if self.last_id is None:
            return "no event"
        return f"last {short(self.last_id)} (line {self.last_line}, {self.last_layer})"

    def phrase(self, short: Callable[[str], str] = str) -> str:
        """``56 events (28 domain, 28 ops), 20 nodes, last event_...14884b (line 56, ops)``."""
        nodes = f"{self.nodes} node{'' if self.nodes == 1 else 's'}"
        return f"{events_phrase(self.domain, self.ops)}, {nodes}, {self.last_phrase(short)}"

    def to_json(self, short: Callable[[str], str] | None = None) -> dict[str, Any]:
        """The count as JSON (docs/json.md, "Counts"); `short`: add the id as printed."""
        last = None
        if self.last_id is not None:
            last = {"id": self.last_id, "line": self.last_line, "kind": self.last_kind,
                    "layer": self.last_layer}
            if short is not None:
                last["short"] = short(self.last_id)
        return {"events": {"all": self.all, "domain": self.domain, "ops": self.ops},
                "nodes": self.nodes, "last_event": last}
