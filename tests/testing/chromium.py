"""Headless Chromium (Debian's `chromium`, which CI installs) for the page tests: the DOM
after the page's scripts ran, and what they logged."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Debian `chromium` is not installed (apt-get install chromium; CI installs it)",
)
# Flags that work on this machine without a network, a GPU or a sandbox.
FLAGS = ("--headless", "--disable-gpu", "--no-sandbox", "--no-first-run")


def dump_dom(url: str, tmp: Path, budget_ms: int = 8000, *extra: str) -> tuple[str, str]:
    """(the DOM after `budget_ms` of virtual time, Chromium's stderr) for `url`."""
    proc = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={tmp / 'chromium-profile'}",
         f"--virtual-time-budget={budget_ms}", "--enable-logging=stderr", "--v=0", *extra,
         "--dump-dom", url],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout, proc.stderr


def screenshot(url: str, out: Path, tmp: Path, size: str = "1600,900",
               budget_ms: int = 5000) -> None:
    """A PNG of `url` at window `size`, after `budget_ms` of virtual time."""
    proc = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={tmp / 'chromium-profile'}",
         f"--virtual-time-budget={budget_ms}", "--hide-scrollbars", f"--window-size={size}",
         f"--screenshot={out}", url],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0 and out.is_file(), proc.stderr[-2000:]


def console(stderr: str, page: Path) -> list[str]:
    """The console messages `page` logged."""
    return [ln for ln in stderr.splitlines() if ":CONSOLE" in ln and page.name in ln]


def body_attrs(dom: str) -> dict[str, str]:
    """The attributes of the DOM's <body>."""
    m = re.search(r"<body([^>]*)>", dom)
    assert m, dom[:500]
    return dict(re.findall(r'([\w-]+)="([^"]*)"', m.group(1)))


def element(dom: str, tag: str, ident: str) -> str:
    """The inner markup of `<tag id="ident">` in `dom` (up to its first `</tag>`)."""
    m = re.search(rf'<{tag} id="{ident}"[^>]*>(.*?)</{tag}>', dom, re.S)
    assert m, f"no <{tag} id={ident}> in the DOM"
    return m.group(1)
