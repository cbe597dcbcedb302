"""Ids typed the way git revisions are: a unique prefix stands for the whole id.

An id is `<kind>_<uuid>` (`goal_0190…`); a prefix matches from the start, and one
without ``_`` also matches from the start of the part after the kind (`0190ab` for
`patch_0190ab…`). An exact id always wins. Several matches are an error that lists
them; no match is left to the caller (its own "no such node" message).

Ids minted in the same second share their time-ordered start, so the commands print an
id short by its end instead (`abbreviations`): ``goal_...4d10a1``, the kind and the
shortest tail no other id of the log ends with (at least six characters), which is
typed back as printed (``...`` or ``…``; the kind may be left out: ``...4d10a1``).
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


GAP = "..."  # between an abbreviation's kind and its tail (typed as ``…`` too)
MIN_TAIL = 6


def _gap(text: str) -> tuple[str, str] | None:
    """(head, tail) of an abbreviation ``head...tail``, else None."""
    for gap in (GAP, "…"):
        head, found, tail = text.partition(gap)
        if found and tail:
            return head, tail
    return None


def matches(text: str, candidate: str) -> bool:
    """Whether `candidate` starts with `text` (or its part after the kind does), or,
    for ``kind_...tail``, is of that kind and ends with that tail."""
    if candidate.startswith(text):
        return True
    gap = _gap(text)
    if gap is not None:
        head, tail = gap
        return candidate.endswith(tail) and candidate.startswith(head) and \
            len(candidate) >= len(head) + len(tail)
    return "_" not in text and candidate.partition("_")[2].startswith(text)


def abbreviations(ids: Iterable[str], minimum: int = MIN_TAIL) -> dict[str, str]:
    """Each id of `ids` as printed short: ``kind_...tail``, the shortest tail (at least
    `minimum` characters) that no other id ends with; the id itself when that is no
    shorter. Every abbreviation names its id alone (`match_id`) among `ids`."""
    backwards = sorted(i[::-1] for i in set(ids))  # neighbours share the longest tails
    out = {}
    for n, rev in enumerate(backwards):
        need = minimum
        for m in (n - 1, n + 1):
            if not 0 <= m < len(backwards):
                continue
            other = backwards[m]
            if rev[:need] != other[:need]:  # fewer than `need` common trailing characters
                continue
            common = need
            while common < len(rev) and common < len(other) and rev[common] == other[common]:
                common += 1
            need = common + 1
        full = rev[::-1]
        kind, sep, _rest = full.partition("_")
        short = f"{kind}{sep}{GAP}{full[-need:]}" if sep else f"{GAP}{full[-need:]}"
        out[full] = short if len(short) < len(full) and need < len(full) - len(kind) - 1 \
            else full
    return out


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
