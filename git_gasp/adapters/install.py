"""Install / uninstall our hook entries in an agent's settings file, never clobbering.

Claude Code reads ``hooks`` from ``.claude/settings.json`` (project) or
``~/.claude/settings.json`` (user, ``$CLAUDE_CONFIG_DIR`` when set); Codex 0.171.0
reads the same shape from ``.codex/hooks.json``. Each event maps to a list of entries
``{"matcher"?, "hooks": [{"type": "command", "command", "timeout"}]}``.

Ours are the command hooks whose command runs ``git-gasp adapt hook`` (or ``git gasp
adapt hook``). Installing removes older copies of ours and appends one entry per
event, leaving every other key, entry and hook as it was (a re-install that changes
nothing does not rewrite the file); uninstalling removes only ours (and the event
lists / ``hooks`` object that become empty by that). A file that is not valid JSON,
or whose ``hooks`` is not shaped as above, is refused with one line and left
untouched. Writes are atomic and never go through a link that leads out of the project
(or, for the user's file, out of $HOME): see ``agent_files.py``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from git_gasp.adapters.agent_files import write_project_file, write_user_file
from git_gasp.adapters.payloads import HOOK_EVENTS
from git_gasp.base.errors import GaspError

TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure")
HOOK_TIMEOUT_S = 60  # the agent's budget for our hook; the hook itself stops at ~20 s
_OURS = re.compile(r"(?:^|[\s/'\"])git(?:-|\s+)gasp['\"]?\s+adapt\s+hook\b")


def hook_command(agent: str) -> str:
    """The shell command the agent runs: this install's git-gasp, else the one on PATH."""
    beside = Path(sys.executable).with_name("git-gasp")
    exe = str(beside) if beside.exists() else shutil.which("git-gasp")
    if exe is None:
        raise GaspError("cannot find the git-gasp program (next to this Python or on PATH); "
                        "install git-gasp first")
    return f"{shlex.quote(exe)} adapt hook --agent {agent}"


def is_ours(hook: Any) -> bool:
    return (isinstance(hook, dict) and isinstance(hook.get("command"), str)
            and _OURS.search(hook["command"]) is not None)


def our_entries(command: str) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for event in HOOK_EVENTS:
        entry: dict[str, Any] = {}
        if event in TOOL_EVENTS:
            entry["matcher"] = "*"
        entry["hooks"] = [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S}]
        out[event] = [entry]
    return out


@dataclass
class InstallResult:
    path: Path
    changed: bool
    removed: int = 0  # hooks of ours removed
    added: int = 0


def _load(path: Path) -> dict:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise GaspError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise GaspError(f"{path} is not valid JSON ({exc}); fix it first, it was left "
                        "untouched") from None
    if not isinstance(data, dict):
        raise GaspError(f"{path} is not a JSON object; it was left untouched")
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict) or not all(isinstance(v, list) for v in hooks.values()):
        raise GaspError(f"{path}: `hooks` is not an object of event lists; it was left "
                        "untouched")
    return data


def _strip_ours(hooks: dict) -> int:
    removed = 0
    for event in list(hooks):
        kept_entries = []
        for entry in hooks[event]:
            if isinstance(entry, dict) and isinstance(entry.get("hooks"), list):
                inner = [h for h in entry["hooks"] if not is_ours(h)]
                removed += len(entry["hooks"]) - len(inner)
                if not inner and entry["hooks"]:
                    continue  # the entry held only ours
                entry = dict(entry, hooks=inner)
            kept_entries.append(entry)
        if kept_entries or not hooks[event]:
            hooks[event] = kept_entries
        else:
            del hooks[event]
    return removed


def _is_user_file(path: Path) -> bool:
    return os.path.abspath(path) == os.path.abspath(claude_settings_path(Path(), "user"))


def write_settings(path: Path, data: Any, *, user_scope: bool | None = None) -> Path:
    """Write the settings object `data` to `path` (see ``agent_files.py`` for links).

    A project file is ``<project>/<dir>/<name>`` (``.claude/settings.json``,
    ``.codex/hooks.json``); `user_scope` None means: the user's Claude settings file."""
    text = (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    if _is_user_file(path) if user_scope is None else user_scope:
        return write_user_file(path, text)
    return write_project_file(path.parent.parent, Path(path.parent.name, path.name), text)


def merge_hooks(path: Path, command: str | None, *, uninstall: bool = False,
                user_scope: bool | None = None) -> InstallResult:
    """Install (command given) or uninstall our hooks in the settings file at `path`
    (`user_scope` as for `write_settings`)."""
    data = _load(path)
    before = json.dumps(data, sort_keys=True)
    had_hooks = "hooks" in data
    hooks = {k: list(v) for k, v in data.get("hooks", {}).items()}
    removed = _strip_ours(hooks)
    added = 0
    if not uninstall:
        assert command is not None
        for event, entries in our_entries(command).items():
            hooks.setdefault(event, []).extend(entries)
            added += len(entries)
    if hooks or (had_hooks and not uninstall):
        data["hooks"] = hooks
    elif had_hooks:
        del data["hooks"]
    changed = json.dumps(data, sort_keys=True) != before
    if changed:
        write_settings(path, data, user_scope=user_scope)
    return InstallResult(path, changed, removed, added)


def claude_settings_path(repo: Path, scope: str) -> Path:
    if scope == "user":
        base = os.environ.get("CLAUDE_CONFIG_DIR")
        return (Path(base) if base else Path.home() / ".claude") / "settings.json"
    return repo / ".claude" / "settings.json"


def codex_hooks_path(repo: Path) -> Path:
    return repo / ".codex" / "hooks.json"


def codex_trust_note(repo: Path) -> str:
    """What Codex needs before it runs project hooks, and whether config.toml has it."""
    home = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
    config = home / "config.toml"
    key = f"[projects.{json.dumps(str(repo.resolve()))}]"
    try:
        text = config.read_text(encoding="utf-8")
    except OSError:
        text = ""
    trusted = False
    if key in text:
        section = text.split(key, 1)[1].split("\n[", 1)[0]
        trusted = re.search(r'(?m)^\s*trust_level\s*=\s*"trusted"', section) is not None
    if trusted:
        return f"Codex trusts this project ({config} has {key} trust_level = \"trusted\")."
    return ("Codex runs project hooks only for trusted projects. Add to "
            f"{config}:\n\n  {key}\n  trust_level = \"trusted\"\n\n"
            "or run `codex exec --dangerously-bypass-hook-trust …` (untrusted hooks are "
            "skipped silently).")
