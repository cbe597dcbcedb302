"""`git gasp doctor` on the agents' hook settings, from their dialects: a settings file
that runs git-gasp's hook but would not record (it does not parse, `git-gasp-hook` is
not on PATH, events are missing, Gemini CLI's hooks are turned off), and OpenCode's
plugin (edited, or its hook not on PATH)."""

from __future__ import annotations

import shutil
from pathlib import Path

from git_gasp.adapters.dialects import opencode
from git_gasp.adapters.dialects.table import DIALECTS
from git_gasp.adapters.wiring.agent_hooks import (
    AGENT_EVENTS,
    HOOK,
    is_ours,
    load_settings,
    settings_path,
)
from git_gasp.base.agentfiles import read_settings
from git_gasp.base.errors import GaspError
from git_gasp.base.files import read_file
from git_gasp.doctor.finding import ERROR, OK, WARN, Finding

TOPIC = "agent-hooks"


def _our_hooks(entries: list) -> list[dict]:
    """Our hooks among one event's `entries`: in matcher groups (Claude Code's shape) or
    flat (Cursor's ``command``, Copilot CLI's ``bash``)."""
    out = []
    for e in entries:
        if isinstance(e, dict) and isinstance(e.get("hooks"), list):
            out += [h for h in e["hooks"] if is_ours(h)]
        elif isinstance(e, dict) and is_ours({"command": e.get("command", e.get("bash"))}):
            out.append({"command": e.get("command", e.get("bash"))})
    return out


def _ours(hooks: dict) -> set[str]:
    """The events of `hooks` that run one of our hook commands."""
    return {event for event, entries in hooks.items() if _our_hooks(entries)}


def _plugin(agent: str, path: Path) -> list[Finding]:
    """OpenCode's plugin: ours, running our hook, which is on PATH."""
    d = DIALECTS[agent]
    try:
        text = read_file(path).decode("utf-8", "replace")
    except OSError as exc:
        return [Finding(ERROR, f"cannot read {path}: {exc.strerror or exc}", topic=TOPIC,
                        path=str(path))]
    if not opencode.ours(text):
        return []
    if opencode.plugin_agent(text) != agent:
        return [Finding(ERROR, f"{path}: git-gasp's plugin was edited; it may not record",
                        fix=f"git gasp adapt {agent} install", topic=TOPIC, path=str(path))]
    if shutil.which(HOOK) is None and f"`{HOOK} " in text:
        return [Finding(ERROR, f"{path}: {d.title} runs `{HOOK}`, which is not on PATH",
                        fix="put git-gasp on the agent's PATH", topic=TOPIC, path=str(path))]
    return [Finding(OK, f"{path}: {d.title} runs git-gasp's plugin", topic=TOPIC,
                    path=str(path))]


def _hooks_off(agent: str, data: dict) -> bool:
    """Gemini CLI's ``hooksConfig.enabled = false`` (no hook runs at all)."""
    config = data.get("hooksConfig")
    return agent == "gemini" and isinstance(config, dict) and config.get("enabled") is False


def _check(agent: str, path: Path) -> list[Finding]:
    d = DIALECTS[agent]
    fix = f"fix the file, then `git gasp adapt {agent} install`"
    try:
        data = load_settings(path)[1]
    except GaspError as exc:
        return [Finding(ERROR, f"{exc}: {d.title} runs none of its hooks", fix=fix,
                        topic=TOPIC, path=str(path))]
    hooks = data.get("hooks", {})
    ours = _ours(hooks)
    if not ours:
        return []
    out: list[Finding] = []
    user = settings_path(agent, path, "user") if "user" in d.settings else path
    try:
        user_data = read_settings(user)[1] if user != path else {}
    except GaspError:
        user_data = {}
    if _hooks_off(agent, data) or _hooks_off(agent, user_data):
        out.append(Finding(ERROR, f"{path}: {d.title} runs no hooks (hooksConfig.enabled "
                           "is false)", fix="remove hooksConfig.enabled = false",
                           topic=TOPIC, path=str(path)))
    missing = [e for e in AGENT_EVENTS[agent] if e not in ours]
    if missing:
        out.append(Finding(WARN, f"{path}: git-gasp's hook is not run for "
                           f"{', '.join(missing)}", fix=f"git gasp adapt {agent} install",
                           topic=TOPIC, path=str(path)))
    commands = {h["command"] for entries in hooks.values() for h in _our_hooks(entries)}
    if shutil.which(HOOK) is None and any(not c.startswith("/") for c in commands):
        out.append(Finding(ERROR, f"{path}: {d.title} runs `{HOOK}`, which is not on PATH",
                           fix="put git-gasp on the agent's PATH", topic=TOPIC,
                           path=str(path)))
    if not out:
        out.append(Finding(OK, f"{path}: {d.title} runs git-gasp's hook for "
                           f"{len(ours)} events", topic=TOPIC, path=str(path)))
    return out


def findings(places: list[Path]) -> list[Finding]:
    """Doctor's findings on the hook settings of every agent in the projects at
    `places` (each checked once) and in the user's own files."""
    out: list[Finding] = []
    seen: set[Path] = set()
    paths = [(agent, settings_path(agent, place, scope)) for place in places
             for agent, d in DIALECTS.items() for scope in d.settings]
    for agent, path in paths:
        real = path.resolve()
        if real in seen or not path.exists():
            continue
        seen.add(real)
        out += _plugin(agent, path) if agent == opencode.AGENT else _check(agent, path)
    return out
