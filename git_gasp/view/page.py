"""`git gasp view`: the agent's history as one self-contained, offline HTML file.

The page is page.html with page.css and page.js (package data) inlined and the data
(`view.data`) in a `<script type="application/json">` escaped by `view.htmlpage`;
its Content-Security-Policy allows those two inline blocks by hash and nothing else
(no network, no other script). The script puts log text into the DOM only through
`textContent`, so a title holding markup is shown as text, never parsed.
"""

from __future__ import annotations

import html
import os
import re
from importlib import resources
from pathlib import Path
from typing import Any

from git_gasp.base.errors import GaspError, NotAGitRepo
from git_gasp.base.files import write_output
from git_gasp.base.git import git_dir
from git_gasp.view.htmlpage import script_json, strict_csp

ASSETS = ("page.html", "page.css", "page.js")
_SLOT = re.compile(r"__(CSP|TITLE|STYLE|SCRIPT|DATA)__")


def asset(name: str) -> str:
    """One of the page's package data files, as text."""
    return resources.files("git_gasp.view").joinpath(name).read_text("utf-8")


def render(data: dict[str, Any]) -> bytes:
    """The page's bytes for `data` (one pass over the template: text put in is never
    read again for slots)."""
    css, js = asset("page.css"), asset("page.js")
    title = f"git gasp view: {data['agent']} ({len(data['nodes'])} nodes, " \
            f"{len(data['runs'])} runs)"
    slots = {"CSP": html.escape(strict_csp([js], [css]), quote=False),  # no " in a policy
             "TITLE": html.escape(title),
             "STYLE": css, "SCRIPT": js, "DATA": script_json(data)}
    page = _SLOT.sub(lambda m: slots[m.group(1)], asset("page.html"))
    return page.encode("utf-8")


def default_path(root: Path) -> tuple[Path, Path]:
    """(page, the git dir it lies in): `<gitdir>/gasp/view.html` of the repository
    holding the agent at `root`."""
    try:
        gd = git_dir(root)
    except NotAGitRepo:
        raise GaspError(f"{root} is in no git repository to keep the page in; "
                        "give one with -o FILE") from None
    return gd / "gasp" / "view.html", gd


def write(page: bytes, out: Path, *, root: Path | None = None) -> Path:
    """Write `page` to `out` atomically (its folder made; no link followed below
    `root`); the path written. An OSError is one line."""
    try:
        write_output(out, page, root=root, make_parents=True)
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise GaspError(f"cannot write {out}: {reason}") from None
    return Path(os.path.abspath(out))
