"""Ids typed the way git revisions are: a unique prefix stands for the whole id.

An id is `<kind>_<uuid>` (`goal_0190…`); a prefix matches from the start, and one
without ``_`` also matches from the start of the part after the kind (`0190ab` for
`patch_0190ab…`). An exact id always wins. Several matches are an error that lists
them; no match is left to the caller (its own "no such node" message).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from git_gasp.base.errors import UsageError

SHOWN = 8  # candidates an ambiguity error lists


class AmbiguousId(UsageError):
    """A prefix matches more than one id (exit 2); `candidates` holds them all."""

    def __init__(self, text: str, what: str, candidates: list[str]) -> None:
        shown = ", ".join(candidates[:SHOWN])
        more = len(candidates) - SHOWN
        super().__init__(f"{what} {text!r} is ambiguous: {len(candidates)} match ({shown}"
                         + (f", and {more} more" if more > 0 else "") + ")")
        self.candidates = candidates


def matches(text: str, candidate: str) -> bool:
    """Whether `candidate` starts with `text` (or its part after the kind does)."""
    if candidate.startswith(text):
        return True
    return "_" not in text and candidate.partition("_")[2].startswith(text)


def match_id(ids: Iterable[str], text: str, what: str = "id",
             keep: Callable[[str], bool] | None = None) -> str:
    """The one id of `ids` that `text` names: itself when present, else the only id it
    is a prefix of (see the module doc); `text` unchanged when none matches. `keep`
    narrows several matches (e.g. to a node kind) before they are ambiguous; raises
    AmbiguousId when more than one is left."""
    if not text:
        return text
    found = []
    for candidate in ids:
        if candidate == text:
            return text
        if matches(text, candidate):
            found.append(candidate)
    if len(found) > 1 and keep is not None:
        found = [c for c in found if keep(c)] or found
    if len(found) > 1:
        raise AmbiguousId(text, what, sorted(found))
    return found[0] if found else text


def completions(ids: Iterable[str], incomplete: str, limit: int = 500) -> list[str]:
    """The ids `incomplete` could be completed to (a shell's candidates), sorted."""
    out = sorted(c for c in ids if c.startswith(incomplete))
    return out[:limit]
