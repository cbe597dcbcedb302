"""Line attribution: who wrote each line of a project file and why.

`git blame` (porcelain, through the one git runner) joined to the patches of the fold
that pin the lines' commits (`blame`; a run's earlier commits, `changes`; a pinned
commit a rebase or squash merge rewrote, `rewrites`, by `patchids` or added lines),
the Git AI Standard v3 notes of ``refs/notes/ai`` (`gitai`), and the Agent Trace
records exchanged with other tools (`agent_trace`, `trace_import`). Sits on the
runtime (it reads a folded state and records observations), as otel does; cli uses it.
"""
