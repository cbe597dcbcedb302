"""journal/JOURNAL.md: a human-readable projection of finished runs, appended only.

Existing bytes are never rewritten (check 4); a run already in the journal (its
`## run_…` heading) is not added again.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

from git_gasp.base.files import read_file, refuse_links
from git_gasp.runtime.queries import label
from git_gasp.store.append import append_line_file

JOURNAL_REL = "journal/JOURNAL.md"
_HEADING = re.compile(r"^## (\S+)", re.M)


def when_utc(ms: object) -> str:
    """Epoch milliseconds as `2026-12-01 14:30 UTC` ("?" when not a time)."""
    if not isinstance(ms, int):
        return "?"
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def run_entry(graph, run_id: str) -> str:
    """The journal entry for one finished run."""
    run = graph.nodes[run_id]
    props = run["props"]
    lines = [f"## {run_id}", "",
             f"- task: {props.get('task', '')}",
             f"- outcome: {props.get('outcome', '')}",
             f"- when: {when_utc(props.get('started_ts_ms'))} to "
             f"{when_utc(props.get('finished_ts_ms'))}"]
    if props.get("goal_id"):
        goal = graph.nodes.get(props["goal_id"])
        lines.append(f"- goal: {props['goal_id']}" + (f" — {label(goal)}" if goal else ""))
    for r in graph.incoming(run_id, "produced_by"):
        node = graph.nodes.get(r["from"])
        if node is None or node["kind"] in ("model_call", "tool_call"):
            continue
        status = node["props"].get("status")
        lines.append(f"- {node['kind']} {node['id']}" + (f" [{status}]" if status else "")
                     + (f": {label(node)}" if label(node) else ""))
    calls = [r["from"] for r in graph.incoming(run_id, "produced_by")
             if graph.nodes.get(r["from"], {}).get("kind") in ("model_call", "tool_call")]
    if calls:
        lines.append(f"- calls: {len(calls)} model/tool call(s)")
    return "\n".join(lines) + "\n"


def append_journal(state, entries: dict[str, str] | None = None) -> list[str]:
    """Append an entry for every finished run not yet in the journal; return their ids.

    `entries` (run id -> its entry, headed ``## <run id>``) appends those instead, in
    that order, each run not yet in the journal (`git gasp recap --journal`)."""
    path: Path = state.root / JOURNAL_REL
    refuse_links(path, state.root)  # a committed link (to ~/.bashrc, say) is never written
    try:
        old = read_file(path, root=state.root)
    except FileNotFoundError:
        old = b""
    present = set(_HEADING.findall(old.decode("utf-8", "replace")))
    if entries is None:
        entries = {n["id"]: "" for n in state.graph.nodes.values()
                   if n["kind"] == "run" and n["props"].get("status") == "finished"}
    runs = [rid for rid in entries if rid not in present]
    if not runs:
        return []
    text = "".join("\n" + (entries[rid] or run_entry(state.graph, rid)) for rid in runs)
    if old and not old.endswith(b"\n"):
        text = "\n" + text
    if not old:
        text = "# Journal\n" + text
    state.store.lease.ensure()
    append_line_file(path, text.encode(), fsync=state.store.fsync, root=state.root)
    return runs
