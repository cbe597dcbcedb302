"""Pause the cyclic garbage collector around bulk, acyclic allocation (parse, fold)."""

from __future__ import annotations

import gc


class gc_paused:  # noqa: N801 - used as a function: `with gc_paused():`
    """Disable the cyclic GC for the block; restore its previous state afterwards.

    Parsed events and folded graphs hold no reference cycles, and on large logs the
    collector rescanning the growing heap costs more than the parsing itself. (A class,
    not a ``contextlib`` generator: a short command does not pay for importing it.)
    """

    def __enter__(self) -> None:
        self._was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self._was_enabled:
            gc.enable()
