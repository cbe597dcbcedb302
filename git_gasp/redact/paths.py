"""No machine paths in the log: what a session stores names paths as every clone reads them.

A log is shared with every clone, so the absolute paths of the machine a session ran
on are noise there, and leak the person's user name and layout. Every string the
session writer stores (tool inputs and outputs, responses, lifted text, the run's
``cwd``) passes `LocalPaths.text` after the redactor: a path inside the project (the
work tree holding the session's directory) becomes relative to its top (the top itself
``.``), a path under the home directory ``~/…``; anything else is kept. The
transcript is named by its archive path (``transcripts/<run>.jsonl.gz``), or by the
sha256 of its path when none is archived. ``[capture] paths = "absolute"`` in
``.agent/config.toml`` keeps the paths as they were.
"""

from __future__ import annotations

import os
import re
from hashlib import sha256
from typing import Any

from git_gasp.redact.redactor import Redactor

_AFTER = r"(?=/|[^\w.\-~]|$)"  # a prefix ends a path component: no /tmp/ab for /tmp/a


def project_top(cwd: str | None) -> str | None:
    """The top of the work tree holding `cwd` (the nearest directory at or above it
    with a ``.git``), else `cwd` itself; None without a cwd."""
    if not cwd or not os.path.isabs(cwd):
        return None
    here = os.path.normpath(cwd)
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            return here
        up = os.path.dirname(here)
        if up == here:
            return os.path.normpath(cwd)
        here = up


class LocalPaths:
    """Rewrites the machine paths in stored text: the project's top to relative, the
    home directory to ``~`` (`absolute`: nothing is rewritten)."""

    def __init__(self, project: str | None, home: str | None, *, absolute: bool = False) -> None:
        self.project, self.home = project, home
        self._subs: list[tuple[re.Pattern[str], str]] = []
        forms: list[tuple[str, str]] = []
        for prefix, local in ((project, "."), (home, "~")):
            if absolute or not prefix or (local == "." and prefix.count("/") < 2):
                continue  # never the root itself, nor a project at the top of /
            for form in dict.fromkeys([os.path.normpath(prefix), os.path.realpath(prefix)]):
                if form != "/":
                    forms.append((form, local))
        forms.sort(key=lambda f: -len(f[0]))  # the longest first: a project under home
        for form, local in forms:
            if local == ".":  # "<project>/x" is "x", "<project>" alone "."
                self._subs.append((re.compile(re.escape(form) + "/(?=[^/])"), ""))
            self._subs.append((re.compile(re.escape(form) + _AFTER), local))

    @classmethod
    def for_session(cls, cwd: str | None, home: str | None = None, *,
                    absolute: bool = False) -> LocalPaths:
        """The paths of a session run in `cwd` by a person whose home is `home` (by
        default this process's)."""
        return cls(project_top(cwd), home or os.environ.get("HOME") or None,
                   absolute=absolute)

    def text(self, text: str) -> str:
        """`text` with the project and home prefixes of its paths made local."""
        if "/" not in text:
            return text
        for pattern, local in self._subs:
            text = pattern.sub(local, text)
        return text

    def path(self, path: str | None) -> str | None:
        """One path as stored (None stays None)."""
        return None if path is None else self.text(path)

    def value(self, value: Any) -> Any:
        """A copy of JSON `value` with every string's paths made local."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        return value


def transcript_ref(path: str | None, archive: str | None) -> str | None:
    """How a run names its transcript: the archive's path, else ``sha256:`` of the
    file's path (which names the machine's layout), else None."""
    if archive:
        return archive
    if not path:
        return None
    return "sha256:" + sha256(path.encode("utf-8", "surrogatepass")).hexdigest()


class LocalRedactor:
    """The redactor, then `LocalPaths`: what every string a session stores passes."""

    def __init__(self, paths: LocalPaths, redactor: Redactor | None = None) -> None:
        self.paths = paths
        self.redactor = redactor or Redactor()

    def text(self, text: str) -> str:
        return self.paths.text(self.redactor.text(text))

    def value(self, value: Any) -> Any:
        return self.paths.value(self.redactor.value(value))

    def field(self, key: str, value: str) -> str:
        return self.paths.text(self.redactor.field(key, value))
