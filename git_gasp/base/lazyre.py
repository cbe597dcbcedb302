"""`LazyPattern`: a module-level regular expression compiled on first use.

Compiling a pattern runs ``re``'s Python compiler (about half a million instructions for
a typical one), and a module compiling its patterns when it loads makes every command
that imports it pay for all of them, used or not; importing ``re`` itself costs more.
A `LazyPattern` imports ``re`` and compiles when one of its methods is first asked for,
then keeps the compiled pattern's methods on itself, so later calls cost what a
compiled pattern's do.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_KEPT = ("match", "fullmatch", "search", "findall", "finditer", "sub", "subn", "split",
         "pattern", "flags", "groups", "groupindex")


class LazyPattern:
    """``re.compile(pattern, flags)``, done when first used."""

    def __init__(self, pattern: str | bytes, flags: int = 0) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:  # only for what is not yet on the instance
        if name.startswith("__"):
            raise AttributeError(name)
        import re

        compiled = re.compile(*self._source)
        for kept in _KEPT:
            setattr(self, kept, getattr(compiled, kept))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"LazyPattern({self._source[0]!r}, {self._source[1]!r})"
