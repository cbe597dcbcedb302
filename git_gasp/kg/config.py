"""The state home and `config.yml`, in the exact shape Perstate's scripts read.

    default_repo: git@github.com:me/memory.git
    default_branch: main
    sessions:
      <session-id>:
        branch: <branch>

Perstate greps this file line by line (`grep -A1 "^  <id>:"`), so we write it in
that shape: values plain unless YAML would read them differently, two-space
session keys, `branch:` on the next line. Unknown top-level keys and unknown
per-session keys are kept. Writes are atomic (base.files) under a lock file so
two sessions binding at once cannot lose each other's entry.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from git_gasp.base.errors import GaspError, UsageError
from git_gasp.base.fileops import file_lock
from git_gasp.base.files import atomic_write

SESSION_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+=/-]{0,199}$")


def state_home() -> Path:
    """`$PERSTATE_HOME`, else `~/.perstate`."""
    env = os.environ.get("PERSTATE_HOME")
    return Path(env).expanduser() if env else Path.home() / ".perstate"


def check_session_id(sid: str) -> str:
    if not SESSION_ID_RE.match(sid) or sid.endswith(":"):
        raise UsageError(
            f"invalid session id {sid!r}: use letters, digits and . _ @ + = / - "
            "(at most 200 chars, starting with a letter or digit)"
        )
    return sid


@dataclass
class Config:
    default_repo: str = ""
    default_branch: str = ""
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    exists: bool = False

    def branch_of(self, sid: str | None) -> str | None:
        if not sid:
            return None
        entry = self.sessions.get(sid) or {}
        b = entry.get("branch")
        return str(b) if b else None


def config_path() -> Path:
    return state_home() / "config.yml"


def load() -> Config:
    """Read config.yml (missing file -> empty Config with exists=False)."""
    path = config_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Config()
    except OSError as exc:
        raise GaspError(f"cannot read {path}: {exc.strerror}") from None
    try:
        # BaseLoader: every scalar stays a string (a session id `123` or a branch
        # `yes` must not turn into an int or a bool).
        data = yaml.load(text, Loader=yaml.BaseLoader) or {}  # noqa: S506
    except yaml.YAMLError as exc:
        raise GaspError(f"{path} is not valid YAML: {' '.join(str(exc).split())}") from None
    if not isinstance(data, dict):
        raise GaspError(f"{path} is not a YAML mapping")
    cfg = Config(exists=True)
    cfg.default_repo = str(data.pop("default_repo", "") or "")
    cfg.default_branch = str(data.pop("default_branch", "") or "")
    sessions = data.pop("sessions", None)
    if isinstance(sessions, dict):
        for sid, entry in sessions.items():
            if isinstance(entry, dict):
                cfg.sessions[str(sid)] = dict(entry)
            elif isinstance(entry, str) and entry:
                cfg.sessions[str(sid)] = {"branch": entry}
    cfg.extra = data
    return cfg


def _plain(value: str) -> str:
    """`value` as Perstate writes it (raw) when YAML reads that back unchanged."""
    if value and "\n" not in value:
        try:
            if yaml.load(f"k: {value}", Loader=yaml.BaseLoader) == {"k": value}:  # noqa: S506
                return value
        except yaml.YAMLError:
            pass
    return json.dumps(value, ensure_ascii=False)


def render(cfg: Config) -> str:
    lines = [f"default_repo: {_plain(cfg.default_repo)}"]
    lines.append(f"default_branch: {_plain(cfg.default_branch)}")
    if cfg.extra:
        lines.append(yaml.safe_dump(cfg.extra, sort_keys=False, allow_unicode=True).rstrip("\n"))
    lines.append("sessions:")
    for sid, entry in cfg.sessions.items():
        lines.append(f"  {sid}:")
        entry = dict(entry)
        if "branch" in entry:
            lines.append(f"    branch: {_plain(str(entry.pop('branch')))}")
        for k, v in entry.items():
            lines.append(f"    {k}: {_plain(str(v))}")
    return "\n".join(lines) + "\n"


def save(cfg: Config) -> None:
    """Write config.yml atomically (a new file is private to the user)."""
    home = state_home()
    atomic_write(config_path(), render(cfg).encode("utf-8"), root=home, mode=0o600,
                 make_parents=True)
    cfg.exists = True


@contextlib.contextmanager
def editing() -> Iterator[Config]:
    """Load config.yml under its lock, yield it, and write it back on success."""
    home = state_home()
    home.mkdir(parents=True, exist_ok=True)
    with file_lock(home / ".config.lock", "config"):
        cfg = load()
        yield cfg
        save(cfg)
