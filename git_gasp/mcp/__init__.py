"""`git gasp mcp`: a Model Context Protocol server over the agent's own history.

One module a job (``[mcp]`` of .agent/config.toml is read by ``base.agentconfig``):
`service` holds the fold (opened once, followed with `AgentState.refresh`) and turns
ids typed short into full ones; `search` runs the log search of
`protocol.logsearch` (as `git gasp search` does) and `ready` is a query over the graph;
`recall` reads the memory facts; `knowledge` the Perstate knowledge graph; `writes`
the write tools behind the CLI's write gate; `server` binds them to the official `mcp`
SDK (the only module that imports it). The agents' MCP entries that start this server
are written by ``adapters.wiring.mcp_entries``.
"""
