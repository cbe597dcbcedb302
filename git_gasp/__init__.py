"""git-gasp: the Git Agent State Protocol as a git extension and a library."""

from __future__ import annotations

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """The runtime's names (`git_gasp.runtime.__all__`), loaded when first asked for:
    every entry point imports this package, the agent hook too, which must not pay for
    the runtime (nor for importlib, which brings warnings)."""
    import importlib

    runtime = importlib.import_module("git_gasp.runtime")
    if name in runtime.__all__:
        return getattr(runtime, name)
    raise AttributeError(f"module 'git_gasp' has no attribute {name!r}")
