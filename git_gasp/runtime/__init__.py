"""The runtime an agent embeds: AgentState, the durable store and lease, commit_run,
queries, memory, journal, identity, restore, fork, and the sink (AgentSink,
StateSink) for callback-driven agents.

Names are loaded lazily so `import git_gasp.runtime` stays cheap.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "AgentState": "state",
    "StateError": "state",
    "OpenRun": "state",
    "EventStore": "git_gasp.store.append",
    "LogError": "git_gasp.store.append",
    "TornLogError": "git_gasp.store.append",
    "Lease": "git_gasp.store.lease",
    "LeaseError": "git_gasp.store.lease",
    "LeaseHeld": "git_gasp.store.lease",
    "LeaseCorrupt": "git_gasp.store.lease",
    "commit_run": "commit",
    "CommitError": "commit",
    "lineage": "queries",
    "Lineage": "queries",
    "track_record": "queries",
    "diff_graphs": "queries",
    "fold_at": "queries",
    "PolicySet": "policy",
    "Verdict": "policy",
    "Facts": "memory",
    "append_journal": "journal",
    "amend_identity": "identity",
    "restore": "restore",
    "fork": "fork",
    "AgentSink": "sink",
    "StateSink": "sink",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    """One of `__all__`, imported from its module when first asked for."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'git_gasp.runtime' has no attribute {name!r}")
    if "." not in module:
        module = f"git_gasp.runtime.{module}"
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
