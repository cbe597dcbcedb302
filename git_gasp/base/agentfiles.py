"""The one reader of the coding agents' own settings files (the agents are
`base.agentnames.AGENTS`): Claude Code's ``.claude/settings*.json`` and ``.mcp.json``, Codex's
``.codex/hooks.json`` and ``.codex/config.toml``. Installing hooks or an MCP entry,
and ``doctor`` checking them, read those files here, so every way one can be wrong (not
UTF-8, not JSON or TOML, not an object, nested past MAX_DEPTH, past SMALL_FILE) is the
same one-line `FormatError`.
"""

from __future__ import annotations

import os

from git_gasp.base import bounded
from git_gasp.base.errors import FormatError
from git_gasp.base.files import SMALL_FILE, read_file

MAX_DEPTH = 64  # a settings file nests a few levels; deeper is not one


def read_settings(path: str | os.PathLike[str], *, real: str | os.PathLike[str] | None = None
                  ) -> tuple[str, dict[str, object]]:
    """The text and the parsed object of the agent's settings file at `path` (read at
    `real` when given: the target of a link the caller allows), ``("", {})`` when it is
    missing or blank. JSON unless the name ends in ``.toml``."""
    try:
        data = read_file(real or path, limit=SMALL_FILE)
    except FileNotFoundError:
        return "", {}
    except OSError as exc:
        raise FormatError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise FormatError(f"{path} is not UTF-8 text") from None
    if os.fspath(path).endswith(".toml"):
        return text, _toml(text, path)
    return text, (_json(text, path) if text.strip() else {})


def _json(text: str, path: str | os.PathLike[str]) -> dict[str, object]:
    value = bounded.load_json(text, os.fspath(path), max_depth=MAX_DEPTH)
    if not isinstance(value, dict):
        raise FormatError(f"{path} is not a JSON object")
    return value


def _toml(text: str, path: str | os.PathLike[str]) -> dict[str, object]:
    return bounded.load_toml(text, os.fspath(path), max_depth=MAX_DEPTH)
