"""`git gasp lineage` and `git gasp diff`: the why-chain of a node (or of the node an
event created or changed), two folds compared."""

from __future__ import annotations

import json

import click

from git_gasp.base.errors import GaspError
from git_gasp.cli.ids import NodeId, resolve_node
from git_gasp.cli.options import CONTEXT, agent_root, open_state
from git_gasp.cli.shortids import ShortIds, abbrev_option
from git_gasp.protocol.envelope import OPS_KIND
from git_gasp.protocol.idmatch import match_id
from git_gasp.protocol.summary import printable
from git_gasp.runtime.queries import diff_graphs, fold_at
from git_gasp.runtime.state import AgentState
from git_gasp.view.data import ops_targets


@click.command("lineage", context_settings=CONTEXT)
@click.argument("node", metavar="NODE|EVENT", type=NodeId())
@click.option("--depth", type=int, default=3, show_default=True, help="Hops to follow.")
@click.option("--json", "as_json", is_flag=True, help="Print nodes and edges as JSON.")
@abbrev_option
def lineage(node: str, depth: int, as_json: bool, abbrev: int | None) -> None:
    """The why-chain around NODE (goal -> patch -> eval -> decision ...), or around the
    node EVENT created or changed; ids short, as log prints them (full in --json)."""
    state = open_state()
    node_id = resolve_node(state.graph, node)
    if not state.graph.has_node(node_id):
        node_id = _node_of_event(state, node) or node_id
    result = state.lineage(node_id, depth)
    if as_json:
        click.echo(json.dumps(result.to_json(), ensure_ascii=False, sort_keys=True))
    else:
        short = ShortIds(state.graph.nodes, abbrev=abbrev).node
        # one line at a time, escaped: no control character from the log reaches a terminal
        for line in result.to_markdown(short).splitlines():
            click.echo(printable(line))


def _node_of_event(state: AgentState, text: str) -> str | None:
    """The node the event `text` names (an id or a unique prefix, as `log` prints it)
    created or changed: an ops event's first node, a domain event's own node (its
    payload's id) or else the first node of the ops it caused; None when `text` names
    no event. Raises GaspError for an event that touched no node of the graph."""
    event_id = match_id(state.event_ids(), text, "event")
    if event_id not in state.event_ids():
        return None
    events = state.events()
    event = next(e for e in events if e.id == event_id)
    own = event.payload.get("id") if isinstance(event.payload, dict) else None
    if event.kind == OPS_KIND:
        found = ops_targets(event.payload)
    elif isinstance(own, str) and state.graph.has_node(own):
        found = [own]
    else:
        found = [t for e in events if e.kind == OPS_KIND and e.causation_id == event_id
                 for t in ops_targets(e.payload)]
    for node_id in found:
        if state.graph.has_node(node_id):
            return node_id
    raise GaspError(f"event {text} created or changed no node of the graph (`git gasp log "
                    f"--ops` shows it)")


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
