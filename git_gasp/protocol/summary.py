"""A readable summary of a folded graph: nodes by kind, relations, open goals."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from git_gasp.protocol.fold import FoldResult

# C0 controls, DEL and C1 controls (ESC, CSI, OSC, BEL, CR …) shown as \x.. escapes.
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), *range(0x7F, 0xA0))}


def printable(text: object) -> str:
    """`text` safe for a terminal: every control character (ESC, CSI, OSC, BEL, CR, a
    newline inside a field …) shown as its \\xNN escape, nothing raw."""
    return str(text).translate(_CONTROLS)


_BREAKS = re.compile(r"\s*[\r\n]+\s*")


def one_line(text: str) -> str:
    """`text` on one line: each run of line breaks (and the blanks around it) as `` ⏎ ``."""
    return _BREAKS.sub(" ⏎ ", text).strip()


CLOSED_STATUSES = frozenset(
    {"done", "completed", "closed", "achieved", "abandoned", "cancelled", "canceled", "failed"}
)


def open_goals(result: FoldResult) -> list[dict]:
    """Goal nodes that are neither tombstoned nor in a closed status."""
    out = []
    for node in result.graph.nodes.values():
        status = node["props"].get("status")
        if node["kind"] != "goal" or node["tombstoned"]:
            continue
        if isinstance(status, str) and status.lower() in CLOSED_STATUSES:
            continue
        out.append(node)
    return out


def summarize(result: FoldResult, node: Callable[[str], str] = str,
              event: Callable[[str], str] = str) -> list[str]:
    """Lines of text describing the fold; `node` and `event` print an id (the CLI: short)."""
    g = result.graph
    kinds = Counter(n["kind"] for n in g.nodes.values())
    rels = Counter(r["rel"] for r in g.relations)
    lines = [f"{len(g.nodes)} nodes, {len(g.relations)} relations, version {g.version} "
             "(ops applied)"]
    if kinds:
        lines.append("nodes:     " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    if rels:
        lines.append("relations: " + ", ".join(f"{k} {n}" for k, n in sorted(rels.items())))
    goals = open_goals(result)
    lines.append(f"open goals ({len(goals)}):" if goals else "open goals: none")
    for goal in goals:
        title = goal["props"].get("title", "")
        status = goal["props"].get("status", "?")
        lines.append(f"  {node(goal['id'])}  [{status}]  {title}")
    if result.skipped:
        lines.append(f"skipped ops ({len(result.skipped)}):")
        lines += [f"  {s.describe(event)}" for s in result.skipped]
    return [printable(line) for line in lines]
