"""Id arguments and options that take a unique prefix, as git takes revisions, and that
the shell completes from the agent's fold.

`NodeId(kinds)` and `EventId()` are click types (they mark the parameter and complete
it); once a command has the graph, `resolve_node` / `resolve_options` turn each value
into the full id it is a unique prefix of (`protocol.idmatch.match_id`); an exact id,
or text matching nothing, is passed on unchanged, so the runtime's own errors stay.
Event ids are resolved where the log is read (`store.logview.event_index`).
"""

from __future__ import annotations

from typing import Any

import click
from click.shell_completion import CompletionItem

from git_gasp.cli.options import agent_root
from git_gasp.protocol.idmatch import completions, match_id
from git_gasp.store.logview import fold_agent


class NodeId(click.ParamType):
    """A node id, or a unique prefix of one, of any of `kinds` (all kinds when none)."""

    name = "node id"

    def __init__(self, *kinds: str) -> None:
        self.kinds = kinds

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> str:
        return value

    def shell_complete(self, ctx: click.Context, param: click.Parameter,
                       incomplete: str) -> list:
        return [CompletionItem(i) for i in node_candidates(self.kinds, incomplete)]


class EventId(click.ParamType):
    """An event id of the log, or a unique prefix of one."""

    name = "event id"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> str:
        return value

    def shell_complete(self, ctx: click.Context, param: click.Parameter,
                       incomplete: str) -> list:
        return [CompletionItem(i) for i in event_candidates(incomplete)]


def resolve_node(graph, value: str | None, *kinds: str) -> str | None:
    """`value` as the full id of a node of `graph` (of `kinds`, when given) it is a
    unique prefix of; unchanged when exact or matching nothing (module doc)."""
    if not value:
        return value
    def of_kind(node_id: str) -> bool:
        node = graph.node(node_id)
        return node is not None and node.get("kind") in kinds

    what = " or ".join(kinds) if kinds else "node"
    return match_id(graph.node_ids(), value, what, keep=of_kind if kinds else None)


def resolve_options(graph, values: dict[str, Any]) -> dict[str, Any]:
    """`values` (a command's parameters by name) with each one the current click
    command declares as a `NodeId` resolved against `graph` (`resolve_node`)."""
    ctx = click.get_current_context(silent=True)
    types = {p.name: p.type for p in ctx.command.params} if ctx is not None else {}
    out = dict(values)
    for name, value in values.items():
        kind = types.get(name)
        if isinstance(kind, NodeId) and isinstance(value, str):
            out[name] = resolve_node(graph, value, *kind.kinds)
    return out


# What a completion may insert into a command line: characters no shell (bash, zsh,
# fish) gives a meaning to in a word. An id with any other character (`;`, `$`, a
# backtick, a quote, a space, a newline, a glob) is left out of the candidates, never
# inserted unquoted: the user can still type it, quoted.
_SHELL_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-:+@,/%")


def shell_safe(ids: list[str]) -> list[str]:
    """The `ids` a shell can take as they are (module comment above)."""
    return [i for i in ids if i and _SHELL_SAFE.issuperset(i) and i[0] != "-"]


def node_candidates(kinds: tuple[str, ...], incomplete: str) -> list[str]:
    """Node ids (of `kinds`) starting with `incomplete`, from the fold here; none when
    there is no readable agent here (completion never fails loudly)."""
    try:
        graph = _fold_here().result.graph
        ids = [i for i in graph.node_ids() if i.startswith(incomplete)]
        if kinds:
            ids = [i for i in ids if (graph.node(i) or {}).get("kind") in kinds]
    except Exception:  # noqa: BLE001 - a shell completing: no candidates, no noise
        return []
    return shell_safe(completions(ids, incomplete))


def event_candidates(incomplete: str) -> list[str]:
    """Event ids of the log here starting with `incomplete` (none when unreadable)."""
    try:
        parsed = _fold_here().repo.parsed
        return shell_safe(completions((e.id for e in parsed.events), incomplete))
    except Exception:  # noqa: BLE001 - a shell completing: no candidates, no noise
        return []


def _fold_here():
    return fold_agent(agent_root())
