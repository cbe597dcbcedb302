"""`git gasp blame FILE [-L A,B] [--json] [REV]`: git blame, each line joined to the
patch that pinned its commit, that patch's goal, run, eval and decision."""

from __future__ import annotations

import json
import os
import sys

import click

from git_gasp.attribution.blame import blame as run
from git_gasp.attribution.blame import top_relative
from git_gasp.attribution.render import render
from git_gasp.attribution.trace_import import Imported
from git_gasp.base.errors import UsageError
from git_gasp.base.git import resolve_commit
from git_gasp.cli.options import CONTEXT
from git_gasp.cli.pager import paged
from git_gasp.cli.shortids import abbrev_option, abbreviate_some
from git_gasp.runtime.state import AgentState
from git_gasp.store.location import require_root


@click.command("blame", context_settings=CONTEXT)
@click.argument("args", nargs=-1, metavar="[REV] FILE")
@click.option("-L", "ranges", multiple=True, metavar="A,B",
              help="Only lines A to B (as git blame -L takes it; repeatable).")
@click.option("--json", "as_json", is_flag=True,
              help="One JSON object per line: line, commit, patch, goal, run, eval, decision.")
@abbrev_option
@click.option("--no-pager", is_flag=True, help="Never page the output.")
def blame(args: tuple[str, ...], ranges: tuple[str, ...], as_json: bool, abbrev: int | None,
          no_pager: bool) -> None:
    """Show what revision and author last changed each line of FILE, as git blame does,
    and the patch (and goal) of the agent's log that pinned it: the commit itself, or a
    later commit of the same run (marked ~). Lines no patch explains are plain git
    blame, with what a Git AI note (refs/notes/ai) or an imported Agent Trace record
    says of them. FILE is blamed in the work tree, or at REV (`REV FILE`, `REV -- FILE`,
    or git's older `FILE REV`, taken when its last word names a commit)."""
    rev, path = _split(args)
    cwd = os.getcwd()
    state = AgentState.open(require_root(cwd), end_state=True)
    for note in state.notes:
        click.echo(f"note: {note}", err=True)
    said: list[str] = []
    rows = run(cwd, path, state.graph, ranges=ranges, rev=rev, traces=Imported(state.graph),
               notes=said)
    for note in said:
        click.echo(f"note: {note}", err=True)
    if as_json:
        out = sys.stdout
        for row in rows:
            out.write(json.dumps(row.to_json(), ensure_ascii=False, sort_keys=True) + "\n")
        return
    wanted = {i for r in rows if r.why for i in (r.why.patch, r.why.goal) if i}
    table = abbreviate_some(state.graph.node_ids(), wanted, abbrev)
    short = lambda node_id: table.get(node_id, node_id)  # noqa: E731
    lines = render(rows, top_relative(cwd, path), short)
    with paged(no_pager) as (out, paging):
        if paging:
            for line in lines:
                out.write(line.decode("utf-8", "replace") + "\n")
        else:
            buf = sys.stdout.buffer
            for line in lines:
                buf.write(line + b"\n")
            buf.flush()


def _split(args: tuple[str, ...]) -> tuple[str | None, str]:
    """(REV, FILE) from `[REV] FILE`, `[REV] -- FILE` or `FILE REV` (a UsageError
    otherwise), read as git blame reads them."""
    words = list(args)
    if "--" in words:
        i = words.index("--")
        before, after = words[:i], words[i + 1:]
        if len(after) != 1 or len(before) > 1:
            raise UsageError("blame takes [REV] [--] FILE")
        return (before[0] if before else None), after[0]
    if len(words) == 1:
        return None, words[0]
    if len(words) == 2:  # git blame's rule: `FILE REV` when the last word is a revision
        if resolve_commit(os.getcwd(), words[1]) is not None:
            return words[1], words[0]
        return words[0], words[1]
    raise UsageError("blame takes [REV] FILE (one file)" if words else "name a FILE to blame")
