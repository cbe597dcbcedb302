"""`git gasp doctor`: is this clone wired for multiplayer git? Each finding with its fix.

It sits above everything it diagnoses and reads each thing through its owner's code:
`clone` (the entry, `diagnose`: git hooks, hook managers, the merge driver, ignores),
`agent_state` (the lease, the log, the agent hook queue and its set-aside entries, the
boundary commits that failed), `agent_hooks` (the agents' hook settings, from their
dialects), `mcp_entries` (the agents' MCP entries); `finding` is a finding and the
report.
"""
