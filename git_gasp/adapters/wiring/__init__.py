"""What git-gasp writes into the coding agents' own settings, and only that.

`agent_hooks` installs and removes our agent hook entries (``git-gasp-hook AGENT``) in
an agent's settings file; `mcp_entries` the entry that starts ``git gasp mcp``
(.mcp.json, Codex's config.toml, Gemini CLI's and Qwen Code's settings.json);
`json_edit` rewrites only the values that changed in a JSON settings file. Both keep
every entry that is not ours.
"""
