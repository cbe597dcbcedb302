"""Finding the sessions of one project in the agents' own stores (``import --all``).

A session belongs to a project when the working directory recorded inside it is the
project's directory or lies inside it: an exact path match after resolving links and
normalising, never a shared name prefix (``/work/sib`` does not own ``/work/sib-other``).

- Claude Code keeps ``<config>/projects/<mangled cwd>/<session>.jsonl`` (config is
  ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``). The mangling is lossy (every character but
  ASCII letters and digits becomes ``-``, long names are cut and hashed), so the
  directory name only pre-selects; the ``cwd`` of the transcript's first record that
  has one decides.
- Codex keeps ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`` (``~/.codex`` by
  default; older rollouts may be compressed), whose ``session_meta`` record holds the
  ``cwd``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

from git_gasp.adapters.records import read_raw
from git_gasp.base.errors import GaspError

_MANGLE = re.compile(r"[^A-Za-z0-9]")
_MANGLED_MAX = 200  # Claude Code cuts longer directory names (and appends a hash)
_HEAD_BYTES = 1 << 22  # how far into a plain session file to look for its cwd


def claude_store() -> Path:
    """Where Claude Code keeps its transcripts: ``<config dir>/projects``."""
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(base) if base else Path.home() / ".claude") / "projects"


def codex_store() -> Path:
    """Where Codex keeps its rollouts: ``$CODEX_HOME/sessions``."""
    base = os.environ.get("CODEX_HOME")
    return (Path(base) if base else Path.home() / ".codex") / "sessions"


def store_of(agent: str) -> Path:
    return claude_store() if agent == "claude-code" else codex_store()


def normal(path: str | Path) -> str:
    """`path` absolute, normalised, links resolved as far as they exist."""
    return os.path.realpath(os.path.normpath(os.path.abspath(path)))


def belongs(cwd: str | None, top: str) -> bool:
    """True when the recorded `cwd` is the directory `top` (normalised) or inside it."""
    if not cwd or not os.path.isabs(cwd):
        return False
    here = normal(cwd)
    return here == top or here.startswith(top.rstrip(os.sep) + os.sep)


def _spellings(top: str, given: Path) -> set[str]:
    """The paths an agent may have recorded for `top`: resolved, as given, and $PWD's."""
    names = {top, os.path.normpath(os.path.abspath(given))}
    pwd = os.environ.get("PWD")
    if pwd and os.path.isabs(pwd) and not given.is_absolute():
        logical = os.path.normpath(os.path.join(pwd, given))
        if normal(logical) == top:
            names.add(logical)
    return names


def _lines(path: Path) -> Iterator[bytes]:
    """The first lines of a session file (decompressed when it is compressed), up to
    about a megabyte: the cwd comes with the first records."""
    if path.name.endswith((".zst", ".gz")):
        yield from read_raw(path).split(b"\n")
        return
    seen = 0
    try:
        with path.open("rb") as fh:
            for line in fh:
                yield line
                seen += len(line)
                if seen > _HEAD_BYTES:
                    return
    except OSError as exc:
        raise GaspError(f"cannot read {path}: {exc.strerror or exc}") from None


def recorded_cwd(agent: str, path: Path) -> str | None:
    """The working directory a session file records (Claude: the first record with a
    ``cwd``; Codex: ``session_meta.cwd``), or None."""
    for line in _lines(path):
        if b'"cwd"' not in line:
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if not isinstance(obj, dict):
            continue
        if agent == "codex":
            payload = obj.get("payload")
            if obj.get("type") == "session_meta" and isinstance(payload, dict):
                cwd = payload.get("cwd")
                return cwd if isinstance(cwd, str) else None
            continue
        if isinstance(obj.get("cwd"), str):
            return obj["cwd"]
    return None


def _claude_candidates(store: Path, spellings: set[str]) -> list[Path]:
    prefixes = {_MANGLE.sub("-", s)[:_MANGLED_MAX] for s in spellings}
    try:
        dirs = [d for d in store.iterdir() if d.is_dir()
                and any(d.name.startswith(p) for p in prefixes)]
    except OSError:
        return []
    return sorted(p for d in dirs for p in d.glob("*.jsonl") if p.is_file())


def _codex_candidates(store: Path) -> list[Path]:
    return sorted(p for p in store.glob("**/rollout-*.jsonl*") if p.is_file()
                  and p.name.endswith((".jsonl", ".jsonl.zst", ".jsonl.gz")))


def find_sessions(agent: str, project: Path) -> list[Path]:
    """Every session file of `agent` (``claude-code`` / ``codex``) in its store whose
    recorded working directory is `project` or inside it, oldest path first."""
    top = normal(project)
    store = store_of(agent)
    if agent == "claude-code":
        candidates = _claude_candidates(store, _spellings(top, project))
    else:
        candidates = _codex_candidates(store)
    found = []
    for path in candidates:
        try:
            cwd = recorded_cwd(agent, path)
        except GaspError:
            continue  # unreadable or truncated: not provably ours
        if belongs(cwd, top):
            found.append(path)
    return found
