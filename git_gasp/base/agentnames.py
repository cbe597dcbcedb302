"""The agents git-gasp records from (`AGENTS`), in a module of their own: the agent hook
(``adapters/hook/``), which imports only what queueing needs, checks its argument
against them, as do ``adapt``, ``doctor`` and the payload readers."""

from __future__ import annotations

AGENTS = ("claude-code", "codex")
