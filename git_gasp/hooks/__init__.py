"""Hooks for multiplayer git: install/uninstall, the pre-commit guard, `doctor`.

The hook script template lives in ``git_gasp/hooks/templates/`` (package data), not
in a top-level ``hooks/`` directory: the wheel ships only the ``git_gasp`` package, and
keeping the template inside it means a regular install, an editable install and a
source checkout all read the same file through ``importlib.resources``.
"""
