"""Who ran the agent: the person each run records (``metadata.person`` of its
``run.started`` event and run node), so a team's runs are told apart.

Default: the name of git's author identity (as git resolves it: ``GIT_AUTHOR_NAME``,
else ``user.name``). ``gasp.person`` (git config) names
someone else, or, set to the empty string, records no one; ``gasp.personEmail = true``
adds the e-mail (``Name <e-mail>``), which is never recorded unless asked for.
"""

from __future__ import annotations

import os

from git_gasp.base import git
from git_gasp.base.errors import GaspError
from git_gasp.redact.redactor import Redactor

_KEYS = r"^gasp\.(person|personemail)$"
_TRUE = ("true", "yes", "on", "1")


def person(root: str | os.PathLike) -> str | None:
    """The person a run started at the agent `root` records, or None (no identity, or
    ``gasp.person`` set empty); redacted like everything else stored (a token pasted
    into a name field stays out of the log)."""
    who = _configured_person(root)
    return Redactor(entropy=False).text(who) if who else who


def _configured_person(root: str | os.PathLike) -> str | None:
    try:
        proc = git.run(root, "config", "-z", "--get-regexp", _KEYS, check=False)
    except GaspError:
        return None
    values: dict[str, str] = {}
    for entry in proc.stdout.split(b"\0"):
        key, _, value = entry.decode("utf-8", "replace").partition("\n")
        if key:
            values[key.lower()] = value.strip()
    if "gasp.person" in values:
        name, email = values["gasp.person"], None
        if not name:
            return None
    else:
        name, email = _identity(root)
    if not name:
        return None
    if values.get("gasp.personemail", "").lower() in _TRUE:
        email = email or _identity(root)[1]
        return f"{name} <{email}>" if email else name
    return name


def _identity(root: str | os.PathLike) -> tuple[str | None, str | None]:
    """(name, e-mail) of git's author identity at `root`; (None, None) without one."""
    proc = git.run(root, "var", "GIT_AUTHOR_IDENT", check=False)
    ident = proc.stdout.decode("utf-8", "replace").strip() if proc.returncode == 0 else ""
    name, sep, rest = ident.partition(" <")
    if not sep:
        return None, None
    return name.strip() or None, rest.partition(">")[0].strip() or None
