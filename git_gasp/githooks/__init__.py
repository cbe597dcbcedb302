"""Git hooks for multiplayer git: install/uninstall the guard hooks, hook managers,
`doctor`. (Agent hook payloads live in ``adapters/payloads.py``; the guard itself in
``guard/``.) The script templates live in the top-level ``hooks/``; see ``templates``.
"""
