"""The agents git-gasp records from (`AGENTS`), in a module of their own: the agent hook
(``adapters/agent_hook/``), which imports only what queueing needs, checks its argument
against them, as do ``adapt``, ``doctor`` and the payload readers. What each agent
speaks (its settings, events, payloads) is its dialect, ``adapters/dialects/table.py``."""

from __future__ import annotations

AGENTS = ("claude-code", "codex", "gemini", "qwen-code", "copilot", "cursor", "droid",
          "opencode")
