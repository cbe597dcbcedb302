"""A path as a gitignore pattern that matches it and nothing else (for ``info/exclude``):
anchored with a leading ``/``, each glob character (``*``, ``?``, ``[``) and backslash
escaped with a backslash, a trailing space escaped (git drops unescaped ones), a
leading ``#`` or ``!`` escaped. A name git cannot write in such a line (a newline or
carriage return) is refused."""

from __future__ import annotations

from git_gasp.base.errors import GaspError

_SPECIAL = frozenset("\\*?[")


def pattern(rel: str, *, directory: bool = False) -> bytes:
    """The ``info/exclude`` line (without its newline) matching `rel` (a path relative
    to the work tree's top, '/'-separated; a directory's contents with `directory`)."""
    if "\n" in rel or "\r" in rel:
        raise GaspError(f"{rel!r} cannot be written as a git exclude pattern (a line "
                        "break in its name)")
    out = "".join("\\" + c if c in _SPECIAL else c for c in rel.strip("/"))
    stripped = out.rstrip(" ")
    out = stripped + "\\ " * (len(out) - len(stripped))
    return ("/" + out + ("/" if directory else "")).encode("utf-8", "surrogateescape")
