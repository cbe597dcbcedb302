"""Entity ids and relation type names: kebab-case, one safe path component each.

New ids must be kebab-case: lowercase letters (any script) and digits in runs
joined by single hyphens, e.g. `llm-evaluation`. Ids read from an existing graph
(written by hand or by Perstate's scripts) are accepted when they are merely a
safe path component: no separators, not hidden, not `.`/`..`, no control chars.
"""

from __future__ import annotations

import re
import unicodedata

from git_gasp.base.errors import GaspError

MAX_ID_LEN = 120
# `entity.md` lives beside relation-type dirs, and relation files are `<to>.md`
# next to nothing else; an entity or type called `entity` would collide with it
# in tools that look for `entity.md` by name.
RESERVED = frozenset({"entity", "entities", "schema"})


def _is_id_char(ch: str) -> bool:
    return ch.isalnum() and ch == ch.lower() and ch.isprintable()


def is_kebab(name: str) -> bool:
    """True when `name` is a valid new id: kebab-case, bounded, not reserved."""
    if not name or len(name) > MAX_ID_LEN or name in RESERVED:
        return False
    if name.startswith("-") or name.endswith("-") or "--" in name:
        return False
    return all(ch == "-" or _is_id_char(ch) for ch in name)


def is_safe_component(name: str) -> bool:
    """True when `name` can be used as one directory/file name under entities/."""
    if not name or name in (".", "..") or name.startswith("."):
        return False
    if len(name.encode("utf-8")) > 250:
        return False
    return not any(ch in "/\\\0" or not ch.isprintable() for ch in name)


def check_new_id(name: object, what: str = "entity id") -> str:
    """Return `name` if it is a valid new kebab-case id, else raise GaspError."""
    if not isinstance(name, str):
        raise GaspError(f"{what} must be a string, got {type(name).__name__}: {name!r}")
    if not is_kebab(name):
        hint = slugify(name)
        suggestion = f" (try {hint!r})" if hint and hint != name else ""
        raise GaspError(
            f"invalid {what} {name!r}: use kebab-case (lowercase letters and digits joined "
            f"by single hyphens, at most {MAX_ID_LEN} chars, not one of "
            f"{', '.join(sorted(RESERVED))}){suggestion}"
        )
    return name


def check_existing_id(name: object, what: str = "entity id") -> str:
    """Return `name` if it is safe to use as a path component, else raise GaspError."""
    if not isinstance(name, str) or not is_safe_component(name):
        raise GaspError(
            f"invalid {what} {name!r}: must not contain path separators, be hidden, or be '..'"
        )
    return name


def slugify(text: str) -> str:
    """A kebab-case id derived from a label ("LLM Evaluation" -> "llm-evaluation")."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = re.sub(r"[^\w]+|_", "-", text)
    text = re.sub(r"-{2,}", "-", text).strip("-")
    text = text[:MAX_ID_LEN].rstrip("-")
    return text if text not in RESERVED else f"{text}-1"
