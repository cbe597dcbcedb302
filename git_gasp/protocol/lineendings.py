"""Line endings: a GASP file is LF-terminated; tell a checkout git converted to CRLF."""

from __future__ import annotations

import shlex


def lf_fix(paths: list[str]) -> str:
    """The one-line explanation and fix for GASP files a checkout converted to CRLF."""
    named = " ".join(shlex.quote(p) for p in paths)  # names come from a cloned repo
    return ("git converted the line endings of this checkout to CRLF (core.autocrlf or an "
            "eol attribute); GASP files are LF: run `git gasp install-hooks` (it pins "
            f"their line endings), then `git -c core.autocrlf=false checkout -- {named}` "
            "(this rewrites those files as committed, dropping uncommitted edits in them)")


def crlf_converted(data: bytes) -> bool:
    """True when every line of non-empty `data` ends with CRLF: the bytes are LF text
    that a checkout converted, not a log that holds a stray CR somewhere."""
    lf = data.count(b"\n")
    return lf > 0 and data.count(b"\r\n") == lf and (data.endswith(b"\n") or lf > 1)
