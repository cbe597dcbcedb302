"""Short ids as the commands print them (`log`, `lineage`, `run status`, `fold`):
`protocol.idmatch.abbreviations` among every event id of the log and, apart, every node
of the graph (git's --abbrev rule), so each one printed is typed back as printed
(`lineage ID`, `fold --at ID`, `snapshot --at ID`). `--abbrev N` sets the least tail.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import click

from git_gasp.protocol.idmatch import MIN_TAIL, abbreviations

ABBREV_HELP = "Short ids end in at least N characters (default: 6)."


def abbrev_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`--abbrev N`, as `git gasp log` (and git) take it."""
    return click.option("--abbrev", type=click.IntRange(min=1), default=None, metavar="N",
                        help=ABBREV_HELP)(fn)


class ShortIds:
    """The short forms of `node_ids` and `event_ids`, each computed once, on first use,
    among all of its own kind; an id of neither is printed whole."""

    def __init__(self, node_ids: Iterable[str], event_ids: Iterable[str] = (),
                 abbrev: int | None = None) -> None:
        self.minimum = MIN_TAIL if abbrev is None else abbrev
        self._sources = {"node": node_ids, "event": event_ids}
        self._short: dict[str, dict[str, str]] = {}

    def _table(self, which: str) -> dict[str, str]:
        if which not in self._short:
            self._short[which] = abbreviations(self._sources[which], self.minimum)
        return self._short[which]

    def node(self, node_id: str) -> str:
        """`node_id` as printed: its abbreviation among the graph's nodes."""
        return self._table("node").get(node_id, node_id)

    def event(self, event_id: str) -> str:
        """`event_id` as printed: its abbreviation among the log's events."""
        return self._table("event").get(event_id, event_id)


def abbreviate_some(ids: Iterable[str], wanted: Iterable[str],
                    abbrev: int | None = None) -> dict[str, str]:
    """The short forms of `wanted` among every id of `ids`, exactly as `ShortIds` prints
    them, without sorting all of `ids`: an id that shares fewer than the least tail's
    characters with another cannot lengthen its tail, so each wanted id is shortened
    among the ids ending with the same least tail only (one pass over `ids`)."""
    minimum = MIN_TAIL if abbrev is None else abbrev
    wanted = set(wanted)
    groups: dict[str, list[str]] = {w[-minimum:]: [] for w in wanted}
    for i in ids:
        group = groups.get(i[-minimum:])
        if group is not None:
            group.append(i)
    out: dict[str, str] = {}
    for w in wanted:
        group = groups[w[-minimum:]]
        out[w] = abbreviations(group if w in group else [*group, w], minimum).get(w, w)
    return out
