"""Which git hooks a hook manager's configuration runs the GASP guard in, read by parsing
it (pre-commit's and lefthook's YAML/TOML/JSON, husky's shell scripts), never by
searching its text: a commented-out line does not count, and git-gasp's own
``.pre-commit-hooks.yaml`` ids (``gasp-guard``, ``gasp-merge-guard``) count with the
stages that file gives them.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from pathlib import Path

import yaml

from git_gasp.base import bounded
from git_gasp.base.files import SMALL_FILE, read_file

HOOKS = ("pre-commit", "pre-merge-commit")
# git-gasp's .pre-commit-hooks.yaml: each id and the stages it declares
SHIPPED_IDS = {"gasp-guard": ("pre-commit",), "gasp-merge-guard": ("pre-merge-commit",)}
# pre-commit's legacy stage names
_STAGE_ALIASES = {"commit": "pre-commit", "merge-commit": "pre-merge-commit"}
_ALL_STAGES = HOOKS  # what a hook without `stages` runs in, of the two we care about


class ConfigError(Exception):
    """The configuration cannot be parsed (the manager would refuse it too)."""


def runs_guard(command: str, *, comments: bool = False) -> bool:
    """Whether the shell `command` runs `git gasp hook NAME` (or `git-gasp hook NAME`,
    `python -m git_gasp.cli.main hook NAME`) for either hook."""
    try:
        lex = shlex.shlex(command, posix=True, punctuation_chars=True)
        lex.whitespace_split = True
        if not comments:
            lex.commenters = ""
        words = list(lex)
    except ValueError:  # unbalanced quotes: the shell refuses the line, nothing runs
        return False
    for i, word in enumerate(words):
        rest = words[i + 1:i + 4]
        if word == "git" and rest[:1] == ["gasp"]:
            rest = rest[1:]
        elif not (word.endswith("git-gasp") or word == "git_gasp.cli.main"):
            continue
        if len(rest) >= 2 and rest[0] == "hook" and rest[1] in HOOKS:
            return True
    return False


def _load(path: Path) -> object:
    text = read_file(path, limit=SMALL_FILE).decode("utf-8", "replace")
    name = path.name
    try:
        if name.endswith((".yml", ".yaml")):
            return bounded.bounded(yaml.safe_load(text), name)
        if name.endswith(".toml"):
            return bounded.load_toml(text, name)
        if name.endswith(".jsonc"):
            text = re.sub(r"^\s*//.*$", "", text, flags=re.M)
        return bounded.load_json(text, name)
    except Exception as exc:  # noqa: BLE001 - yaml, toml and json errors alike
        first = " ".join(str(exc).split())[:160]
        raise ConfigError(f"{name} does not parse: {first}") from None


def _stages(values: object, default: Iterable[str]) -> set[str]:
    if not isinstance(values, list):
        return set(default)
    return {_STAGE_ALIASES.get(v, v) for v in values if isinstance(v, str)}


def pre_commit_stages(path: Path) -> set[str]:
    """The git hooks (of HOOKS) in which `.pre-commit-config.yaml` runs the guard."""
    config = _load(path)
    if config is None:
        return set()
    if not isinstance(config, dict):
        raise ConfigError(f"{path.name} is not a mapping")
    default = _stages(config.get("default_stages"), _ALL_STAGES)
    found: set[str] = set()
    repos = config.get("repos")
    for repo in repos if isinstance(repos, list) else ():
        if not isinstance(repo, dict) or not isinstance(repo.get("hooks"), list):
            continue
        local = repo.get("repo") in ("local", "meta")
        for hook in repo["hooks"]:
            if not isinstance(hook, dict):
                continue
            entry = hook.get("entry")
            if isinstance(entry, str) and runs_guard(entry):
                found |= _stages(hook.get("stages"), default)
            elif not local and hook.get("id") in SHIPPED_IDS:
                found |= _stages(hook.get("stages"), SHIPPED_IDS[hook["id"]])
    return found & set(HOOKS)


def _lefthook_commands(section: object) -> Iterable[str]:
    """Every command a lefthook hook section runs: commands, scripts' runners, jobs."""
    if not isinstance(section, dict):
        return
    commands = section.get("commands")
    for cmd in commands.values() if isinstance(commands, dict) else ():
        if isinstance(cmd, dict) and isinstance(cmd.get("run"), str):
            yield cmd["run"]
    scripts = section.get("scripts")
    for name, script in scripts.items() if isinstance(scripts, dict) else ():
        if isinstance(script, dict) and isinstance(script.get("runner"), str):
            yield f"{script['runner']} {name}"
    jobs = section.get("jobs")
    for job in jobs if isinstance(jobs, list) else ():
        if isinstance(job, dict):
            if isinstance(job.get("run"), str):
                yield job["run"]
            if isinstance(job.get("group"), dict):
                yield from _lefthook_commands(job["group"])


def lefthook_stages(paths: Iterable[Path]) -> set[str]:
    """The git hooks (of HOOKS) in which the lefthook files `paths` run the guard (a
    `lefthook-local` file adds to the main one)."""
    found: set[str] = set()
    for path in paths:
        config = _load(path)
        if config is None:
            continue
        if not isinstance(config, dict):
            raise ConfigError(f"{path.name} is not a mapping")
        for name in HOOKS:
            if any(runs_guard(c) for c in _lefthook_commands(config.get(name))):
                found.add(name)
    return found


def husky_runs_guard(script: Path) -> bool:
    """Whether husky's hook script `script` runs the guard (comments do not count)."""
    try:
        text = read_file(script, limit=SMALL_FILE).decode("utf-8", "replace")
    except OSError:
        return False
    return any(runs_guard(line, comments=True) for line in text.splitlines())
