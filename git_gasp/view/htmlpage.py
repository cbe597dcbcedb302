"""Self-contained HTML pages (`kg view`, `view`): data that cannot escape its script
element, and a Content-Security-Policy that lets nothing load from anywhere.

User text travels as JSON inside `<script type="application/json">` with `<`, `>`,
`&`, U+2028 and U+2029 escaped, so no string can close or comment the element; the
pages put it into the DOM only through `textContent`.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

import orjson


def script_json(obj: Any) -> str:
    """JSON that is safe inside a <script> element (nothing can end or comment it).
    What orjson refuses (an integer past 64 bits, a lone surrogate) is written by the
    json module, ASCII-escaped."""
    try:
        text = orjson.dumps(obj).decode("utf-8")
    except (TypeError, orjson.JSONEncodeError):
        text = json.dumps(obj, separators=(",", ":"))
    return (text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def source_hash(text: str) -> str:
    """The CSP source (`'sha256-…'`) allowing exactly this inline script or style."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def strict_csp(scripts: list[str], styles: list[str]) -> str:
    """A policy for a page that fetches nothing: only the given inline scripts and
    styles run (by hash, so injected markup could not add one), no network, no frames,
    no forms, no base URL; images only as data: URLs."""
    return ("default-src 'none'; script-src " + " ".join(map(source_hash, scripts))
            + "; style-src " + " ".join(map(source_hash, styles))
            + "; img-src data:; base-uri 'none'; form-action 'none'")
