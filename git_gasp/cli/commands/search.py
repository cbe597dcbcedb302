"""`git gasp search QUERY`: the events of the log whose text holds every word of QUERY,
best first, one line each: the event's short id (as `log` prints it), its line in the
log, its kind, its run and the text that matched. The engine is the MCP tool
`gasp_search`'s (`protocol.logsearch`), over the log's bytes: no fold. Exits 1 when
nothing matches, as grep does."""

from __future__ import annotations

import json
import os

import click

from git_gasp.base.files import map_regular_file
from git_gasp.cli.dates import date_ms
from git_gasp.cli.group import CONTEXT_SETTINGS
from git_gasp.cli.shortids import abbrev_option, abbreviate_some
from git_gasp.conformance.packs import load_vocabulary
from git_gasp.conformance.saved.counts import log_count
from git_gasp.protocol.logsearch import Hit, search_log
from git_gasp.protocol.summary import one_line, printable
from git_gasp.protocol.vocab import BASE_NODE_KINDS
from git_gasp.store.attributes import log_location
from git_gasp.store.location import resolve_agent_root

SHOWN = 100  # characters of the matching text a line shows


@click.command("search", context_settings=CONTEXT_SETTINGS)
@click.argument("query", nargs=-1, required=True)
@click.option("--kind", "kinds", multiple=True, metavar="KIND",
              shell_complete=lambda _ctx, _param, text: sorted(
                  k for k in BASE_NODE_KINDS if k.startswith(text)),
              help="Only events about nodes of this kind (repeatable): goal, task, run, "
                   "patch, eval, decision, model_call, tool_call, …")
@click.option("--run", "run_id", metavar="RUN_ID",
              help="Only events of this run (an id or a unique prefix).")
@click.option("--agent", metavar="AGENT",
              help="Only events of runs whose agent contains AGENT (case ignored).")
@click.option("--person", metavar="PERSON",
              help="Only events of runs whose person contains PERSON (case ignored).")
@click.option("--since", metavar="DATE|MS",
              help="Only events at or after this date (2026-12-01, '2 days ago', "
                   "yesterday) or epoch milliseconds.")
@click.option("-n", "--max-count", "limit", type=click.IntRange(min=1), metavar="N",
              help="Only the N best hits.")
@abbrev_option
@click.option("--json", "as_json", is_flag=True, help="Print the hits as one JSON object.")
def search(query, kinds, run_id, agent, person, since, limit, abbrev, as_json) -> int:
    """Search the event log: events whose text holds every word of QUERY (case
    ignored), best first; exit 1 when none does."""
    text = " ".join(query)
    since_ms = None if since is None else date_ms("--since", since)
    root = str(resolve_agent_root(None))
    known = load_vocabulary(root).node_kinds if kinds else None
    rel = log_location(root)
    try:
        log = map_regular_file(os.path.join(root, rel), root=root)
    except FileNotFoundError:
        log = None
    try:
        data = log if log is not None else b""
        hits = search_log(data, text, kinds=set(kinds) or None, run=run_id, agent=agent,
                          person=person, since_ms=since_ms, known_kinds=known,
                          limit=limit)[:limit]
        if as_json:
            click.echo(json.dumps({"query": text, "results": [_json(h) for h in hits]},
                                  ensure_ascii=False))
        elif hits:
            every = log_count(root, rel, data).event_ids
            shorts = abbreviate_some(every, [h.event.id for h in hits], abbrev)
            widths = (max(len(str(h.line)) for h in hits),
                      max(len(printable(h.event.kind)) for h in hits),
                      max(len(printable(h.run or "-")) for h in hits))
            for h in hits:
                click.echo(_line(h, shorts[h.event.id], widths, text.lower().split()))
    finally:
        if log is not None:
            log.close()
    return 0 if hits else 1



def _line(hit: Hit, short: str, widths: tuple[int, int, int], words: list[str]) -> str:
    """One hit as a line: short id, log line, kind, run (columns `widths` wide), the
    text that matched."""
    text = one_line(hit.text)
    if len(text) > SHOWN:  # a window from a little before the first word
        at = max(0, text.lower().find(words[0]) - SHOWN // 4)
        text = ("…" if at else "") + text[at:at + SHOWN] + \
            ("…" if at + SHOWN < len(text) else "")
    line, kind, run = widths
    return (f"{short}  {hit.line:>{line}}  {printable(hit.event.kind):<{kind}}  "
            f"{printable(hit.run or '-'):<{run}}  {printable(text)}")


def _json(hit: Hit) -> dict:
    e = hit.event
    return {"id": e.id, "line": hit.line, "kind": e.kind, "ts_ms": e.ts_ms, "run": hit.run,
            "nodes": list(hit.nodes), "node_kind": hit.kind, "score": hit.score,
            "text": hit.text}
