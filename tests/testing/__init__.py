"""Shared test helpers (not a test folder, never shipped): paths, git runners, event
builders, the hermetic environment and the agent-repo template.

Import the module that holds what you need, e.g. ``from tests.testing.run import git``.
"""
