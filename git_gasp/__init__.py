"""git-gasp: the Git Agent State Protocol as a git extension and a library."""

from __future__ import annotations

import importlib

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """The runtime's names (`git_gasp.runtime.__all__`), loaded when first asked for."""
    runtime = importlib.import_module("git_gasp.runtime")
    if name in runtime.__all__:
        return getattr(runtime, name)
    raise AttributeError(f"module 'git_gasp' has no attribute {name!r}")
