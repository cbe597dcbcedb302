"""``[mcp]`` of .agent/config.toml: whether the server's write tools are on, whether
a write commits, and how long a write waits for a lease another writer holds.

    [mcp]
    write = true      # gasp_remember, gasp_observe, gasp_decide (default false)
    commit = false    # commit the log and the facts after each write (default false)
    wait = 10         # seconds a write waits for the lease (default 10; 0: refuse at once)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from git_gasp.base.errors import GaspError
from git_gasp.runtime.policy import load_config

WHERE = ".agent/config.toml"
DEFAULT_WAIT_S = 10.0


@dataclass(frozen=True)
class McpSettings:
    """What ``[mcp]`` says (every key optional)."""

    write: bool = False
    commit: bool = False
    wait: float = DEFAULT_WAIT_S


def parse(config: dict) -> McpSettings:
    """The ``[mcp]`` table of a parsed config.toml; GaspError naming a bad key or value."""
    section = config.get("mcp", {})
    if not isinstance(section, dict):
        raise GaspError(f"{WHERE}: [mcp] must be a table")
    unknown = sorted(set(section) - {"write", "commit", "wait"})
    if unknown:
        raise GaspError(f"{WHERE}: [mcp] has unknown key {unknown[0]!r} "
                        "(known: write, commit, wait)")
    for key in ("write", "commit"):
        if type(section.get(key, False)) is not bool:
            raise GaspError(f"{WHERE}: mcp.{key} = {section[key]!r} is not true or false")
    wait = section.get("wait", DEFAULT_WAIT_S)
    if type(wait) not in (int, float) or not math.isfinite(wait) or wait < 0:
        raise GaspError(f"{WHERE}: mcp.wait = {wait!r} is not a number of seconds (0 or more)")
    return McpSettings(section.get("write", False), section.get("commit", False), float(wait))


def load(root: Path) -> McpSettings:
    """``[mcp]`` of the agent at `root` (defaults when the file or the table is missing)."""
    return parse(load_config(root))
