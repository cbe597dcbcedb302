"""The write tools, `gasp_remember`, `gasp_observe` and `gasp_decide`, behind the CLI's
write gate: on only with ``[mcp] write = true`` (read again at every call, so turning it
off takes effect at once), the lease taken first (waiting up to ``[mcp] wait`` seconds
for a sync or another writer), the new events validated by the runtime's strict writer
and appended, never rewritten. The lease is given back after each call: an open run
is a hooked session's or the CLI's, never the server's (`AgentState.settle_lease`).
Nothing is committed unless ``[mcp] commit = true``, and then exactly the log and the
facts file, as a boundary commit. What an agent writes is redacted where every write
is, by the store's append (`store.redacting`) and `Facts.add`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from git_gasp.base.agentconfig import CONFIG_REL, read_config
from git_gasp.base.errors import UsageError
from git_gasp.mcp.service import Service
from git_gasp.runtime.commit import commit_paths
from git_gasp.runtime.memory import Facts
from git_gasp.store.lease_wait import take

WRITE_TOOLS = ("gasp_remember", "gasp_observe", "gasp_decide")
SOURCE = "mcp"  # an observation's `source` when the caller gives none


class WritesDisabled(UsageError):
    """A write tool was called while the repository does not enable them."""


def disabled(tool: str) -> WritesDisabled:
    return WritesDisabled(f"{tool} is turned off in this repository: write tools need "
                          f"`[mcp] write = true` in {CONFIG_REL} (and a server "
                          "restart to be listed)")


def _commit(state, tool: str, new_id: str) -> str:
    paths = [state.store.rel]
    facts = Facts(state)
    if facts.path.exists():
        paths.append(facts.rel)
    message = f"gasp mcp: {tool} {new_id}\n".encode()
    sha = commit_paths(state.root, paths, message, log_rel=state.store.rel)
    return sha.decode() if isinstance(sha, bytes) else str(sha)


def gated(service: Service, tool: str, write: Callable[[Any], str]) -> dict[str, Any]:
    """Run `write(state)` (which returns the new id) behind the write gate."""
    config = read_config(service.root).mcp
    if not config.write:
        raise disabled(tool)
    with service.lock:
        state = service.state()
        take(state.store.lease, config.wait)
        try:
            state.refresh()  # whatever was appended before we held the lease
            new_id = write(state)
            out: dict[str, Any] = {"id": new_id, "committed": None}
            if config.commit:
                out["committed"] = _commit(state, tool, new_id)
        finally:
            state.settle_lease()
    return out


def remember(service: Service, text: str, derived_from: list[str]) -> dict[str, Any]:
    """Append a fact learned from `derived_from` (event or node ids, prefixes allowed)."""
    if not isinstance(text, str) or not text.strip():
        raise UsageError("text must be the fact, in words")
    if isinstance(derived_from, str):
        derived_from = [derived_from]

    def write(state) -> str:
        return Facts(state).add(text, service.source_ids(derived_from))

    return gated(service, "gasp_remember", write)


def observe(service: Service, summary: str, about: str | None = None,
            source: str | None = None) -> dict[str, Any]:
    """Record an observation (about a node, when given)."""
    if not isinstance(summary, str) or not summary.strip():
        raise UsageError("summary must say what was observed")

    def write(state) -> str:
        node = service.node_id(about, what="about") if about else None
        return state.record_observation(summary, about=node, source=source or SOURCE)

    return gated(service, "gasp_observe", write)


def decide(service: Service, status: str, reason: str,
           patch: str | None = None) -> dict[str, Any]:
    """Record a decision (Approved promotes `patch`, policy permitting; Rejected rejects it)."""
    if not isinstance(reason, str) or not reason.strip():
        raise UsageError("reason must say why")

    def write(state) -> str:
        node = service.node_id(patch, "patch", what="patch") if patch else None
        return state.record_decision(status, reason, patch=node)

    return gated(service, "gasp_decide", write)


__all__ = ["WRITE_TOOLS", "WritesDisabled", "decide", "disabled", "observe",
           "remember"]
