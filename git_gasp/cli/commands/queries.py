"""`git gasp lineage` and `git gasp diff`: the why-chain of a node, two folds compared."""

from __future__ import annotations

import json

import click

from git_gasp.cli.ids import NodeId, resolve_node
from git_gasp.cli.options import CONTEXT, agent_root, open_state
from git_gasp.cli.shortids import ShortIds, abbrev_option
from git_gasp.protocol.summary import printable
from git_gasp.runtime.queries import diff_graphs, fold_at


@click.command("lineage", context_settings=CONTEXT)
@click.argument("node", type=NodeId())
@click.option("--depth", type=int, default=3, show_default=True, help="Hops to follow.")
@click.option("--json", "as_json", is_flag=True, help="Print nodes and edges as JSON.")
@abbrev_option
def lineage(node: str, depth: int, as_json: bool, abbrev: int | None) -> None:
    """The why-chain around NODE (goal -> patch -> eval -> decision ...); ids short, as
    log prints them (full in --json)."""
    state = open_state()
    result = state.lineage(resolve_node(state.graph, node), depth)
    if as_json:
        click.echo(json.dumps(result.to_json(), ensure_ascii=False, sort_keys=True))
    else:
        short = ShortIds(state.graph.nodes, abbrev=abbrev).node
        # one line at a time, escaped: no control character from the log reaches a terminal
        for line in result.to_markdown(short).splitlines():
            click.echo(printable(line))


@click.command("diff", context_settings=CONTEXT)
@click.argument("a")
@click.argument("b")
@click.option("--json", "as_json", is_flag=True, help="Print the difference as JSON.")
def diff(a: str, b: str, as_json: bool) -> None:
    """Compare the folds at A and B: event ids of the log or git revisions (fork branches)."""
    root = agent_root()
    result = diff_graphs(fold_at(root, a), fold_at(root, b))
    if as_json:
        click.echo(json.dumps(result.to_json(), ensure_ascii=False, sort_keys=True))
    else:
        for line in result.lines():
            click.echo(printable(line))
