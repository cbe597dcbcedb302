"""Which object readers this process uses, chosen once (Mercurial's ``policy`` module).

``GASP_ODB`` names it: ``native`` (the default) reads packs, loose objects, trees and
commits with this package's own readers, and refuses, naming the object, what they
cannot read; ``dulwich`` reads everything through dulwich's object store and parsers.
The choice is read on first use and kept for the life of the process; an unknown
value is a one-line error. The default is the faster of the two on
``bench/bench_check.py`` and ``bench/bench_guard.py`` (bench/README.md)."""

from __future__ import annotations

import os

from git_gasp.base.errors import UsageError

NATIVE, DULWICH = "native", "dulwich"
CHOICES = (NATIVE, DULWICH)
DEFAULT = NATIVE
_chosen: str | None = None


class PolicyError(UsageError):
    """``GASP_ODB`` names no implementation."""


def implementation() -> str:
    """``native`` or ``dulwich``: ``GASP_ODB`` as first read in this process."""
    global _chosen
    if _chosen is None:
        value = os.environ.get("GASP_ODB", "").strip().lower() or DEFAULT
        if value not in CHOICES:
            raise PolicyError(f"GASP_ODB={value!r}: expected one of {', '.join(CHOICES)}")
        _chosen = value
    return _chosen


def native() -> bool:
    """True when this package's own readers read the objects."""
    return implementation() == NATIVE
