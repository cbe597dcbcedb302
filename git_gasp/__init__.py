"""git-gasp: the Git Agent State Protocol as a git extension and a library."""

from __future__ import annotations

__version__ = "0.1.0"

# Runtime names re-exported lazily: `import git_gasp` stays as cheap as this file.
_RUNTIME = frozenset({"AgentState", "StateError", "Lease", "LeaseHeld", "LeaseCorrupt",
                      "TornLogError", "LogError", "commit_run", "lineage", "track_record",
                      "diff_graphs", "fold_at", "PolicySet", "Facts", "append_journal",
                      "amend_identity", "restore", "fork", "AgentSink",
                      "StateSink"})


def __getattr__(name: str):
    if name in _RUNTIME:
        import git_gasp.runtime as runtime

        return getattr(runtime, name)
    raise AttributeError(f"module 'git_gasp' has no attribute {name!r}")
