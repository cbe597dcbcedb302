"""Line endings: a GASP file is LF-terminated; tell a checkout git converted to CRLF."""

from __future__ import annotations

LF_FIX = ("git's line-ending conversion (core.autocrlf or an eol attribute) rewrote it "
          "with CRLF endings; keep GASP files LF: `git gasp install-hooks` pins "
          "`eol=lf` for them in .gitattributes, then "
          "`git -c core.autocrlf=false checkout -- .` rewrites them as committed")


def crlf_converted(data: bytes) -> bool:
    """True when every line of non-empty `data` ends with CRLF: the bytes are LF text
    that a checkout converted, not a log that holds a stray CR somewhere."""
    lf = data.count(b"\n")
    return lf > 0 and data.count(b"\r\n") == lf and (data.endswith(b"\n") or lf > 1)
