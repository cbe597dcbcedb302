"""Pause the cyclic garbage collector around bulk, acyclic allocation (parse, fold)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cyclic GC for the block; restore its previous state afterwards.

    Parsed events and folded graphs hold no reference cycles, and on large logs the
    collector rescanning the growing heap costs more than the parsing itself.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
