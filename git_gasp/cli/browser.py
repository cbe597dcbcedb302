"""Opening a written page in the user's browser, only where a graphical one can be."""

from __future__ import annotations

import os
import sys
import webbrowser
from pathlib import Path


def open_page(path: Path) -> bool:
    """Open `path` in a browser; False when none was opened. Without a display (and no
    `BROWSER` named), Python's webbrowser falls back to console browsers (lynx, w3m)
    that would take over the terminal of an agent's shell: those are never started."""
    if not (sys.platform in ("darwin", "win32") or os.environ.get("DISPLAY")
            or os.environ.get("WAYLAND_DISPLAY") or os.environ.get("BROWSER")):
        return False
    try:
        return bool(webbrowser.open(path.resolve().as_uri()))
    except Exception:  # noqa: BLE001 - no browser is not an error
        return False
