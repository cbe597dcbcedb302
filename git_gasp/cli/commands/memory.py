"""`git gasp memory …`: distilled facts and the active memory synthesis."""

from __future__ import annotations

import json
from itertools import chain

import click

from git_gasp.cli.options import CONTEXT, WaitGroup, open_state, release_lease, wait_option
from git_gasp.protocol.idmatch import match_id
from git_gasp.runtime.memory import Facts


def _sources(state, sources: tuple[str, ...]) -> list[str]:
    """Each --from as the full id of the event or run it names (a unique prefix will do)."""
    graph = state.graph
    events = {e.id for e in state.events()}

    def event_or_run(candidate: str) -> bool:
        return candidate in events or (graph.node(candidate) or {}).get("kind") == "run"

    return [match_id(chain(events, graph.node_ids()), s, "event or run", keep=event_or_run)
            for s in sources]


@click.group(context_settings=CONTEXT, cls=WaitGroup)
def memory() -> None:
    """Distilled facts (memory/facts.jsonl) and the active memory synthesis."""


@memory.command("add", context_settings=CONTEXT)
@click.argument("text")
@click.option("--from", "sources", multiple=True, required=True, metavar="ID",
              help="An event or run the fact was learned from (repeatable, required).")
@wait_option
def memory_add(text: str, sources: tuple[str, ...], wait: float | None) -> None:
    """Append a fact; print its id."""
    state = open_state(write=True, wait=wait)
    click.echo(Facts(state).add(text, _sources(state, sources)))
    release_lease(state)


@memory.command("supersede", context_settings=CONTEXT)
@click.argument("old")
@click.argument("text")
@click.option("--from", "sources", multiple=True, required=True, metavar="ID",
              help="An event or run the new version was learned from (repeatable).")
@wait_option
def memory_supersede(old: str, text: str, sources: tuple[str, ...], wait: float | None) -> None:
    """Append a fact that replaces OLD; print its id."""
    state = open_state(write=True, wait=wait)
    click.echo(Facts(state).supersede(old, text, _sources(state, sources)))
    release_lease(state)


@memory.command("list", context_settings=CONTEXT)
@click.option("--all", "show_all", is_flag=True, help="Superseded facts too.")
@click.option("--json", "as_json", is_flag=True, help="One fact object per line.")
def memory_list(show_all: bool, as_json: bool) -> None:
    """The live facts (latest of each chain)."""
    facts = Facts(open_state())
    for f in facts.load() if show_all else facts.live():
        click.echo(json.dumps(f, ensure_ascii=False) if as_json else f"{f['id']}  {f['text']}")


@memory.command("synthesize", context_settings=CONTEXT)
@wait_option
def memory_synthesize(wait: float | None) -> None:
    """Regenerate memory/active_memory.md from the live facts (holding the lease, so
    no writer appends a fact while it is written)."""
    state = open_state(write=True, wait=wait)
    path = Facts(state).synthesize()
    release_lease(state)
    click.echo(f"wrote {path}")
