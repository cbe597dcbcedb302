"""Which object readers this process uses, chosen once (Mercurial's ``policy`` module).

``GASP_ODB`` names it: ``dulwich`` (the default, the design's one object layer) reads
everything through dulwich's object store and parsers; ``native`` reads packs, loose
objects, trees and commits with this package's own readers (being removed: issue 44).
The choice is read on first use and kept for the life of the process; an unknown
value is a one-line error."""

from __future__ import annotations

import os

from git_gasp.base.errors import UsageError

NATIVE, DULWICH = "native", "dulwich"
CHOICES = (NATIVE, DULWICH)
DEFAULT = DULWICH
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
