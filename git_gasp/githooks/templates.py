"""The git hook script templates, whose source of truth is the top-level ``hooks/``.

A wheel and an editable install carry ``hooks/`` as the package
``git_gasp.githooks.scripts`` (setuptools' ``package-dir`` maps it); a plain source
checkout on ``sys.path`` has no such package, and reads ``hooks/`` beside
``git_gasp/``. Both give the same bytes, so the installed hook's version marker (a
hash of the template) is the same however git-gasp was installed.
"""

from __future__ import annotations

from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

from git_gasp.base.errors import GaspError

_PACKAGE = "git_gasp.githooks.scripts"


def template_dir() -> Traversable:
    """Where the hook templates are: the shipped package, else the checkout's hooks/."""
    try:
        return resources.files(_PACKAGE)
    except ModuleNotFoundError:
        return Path(__file__).resolve().parents[2] / "hooks"


def read_template(name: str) -> bytes:
    """The bytes of the hook template `name` (for example ``pre-commit``)."""
    try:
        return template_dir().joinpath(name).read_bytes()
    except OSError as exc:
        raise GaspError(f"the hook template {name!r} is missing from this install: {exc}") from None
