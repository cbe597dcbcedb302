"""Git hooks for multiplayer git: install/uninstall the guard hooks (per clone, and once
per machine), hook managers, the server's pre-receive. (Agent hooks, the ones a coding
agent runs, are ``adapters/``'s; the guard itself is ``guard/``; `git gasp doctor` is
``doctor/``.) The script templates live in the top-level ``hooks/``; see ``templates``.
"""
