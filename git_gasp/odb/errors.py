"""The odb's one error for an object it cannot give: missing, corrupt, of the wrong
type, or refused because it lies (`objects.TreeError`, `packs.UnreadableObject` refine
it). Its own module so the readers that raise it need not import each other."""

from __future__ import annotations


class ObjectError(Exception):
    """An object that is missing, corrupt or of the wrong type."""
