"""Install / uninstall our hook entries in an agent's settings file, never clobbering.

Claude Code reads ``hooks`` from ``.claude/settings.json`` (project, shared: committed),
``.claude/settings.local.json`` (local: this clone only, never committed) or
``~/.claude/settings.json`` (user; ``$CLAUDE_CONFIG_DIR`` when set); Codex 0.171.0 reads
the same shape from ``.codex/hooks.json``. Each event maps to a list of entries
``{"matcher"?, "hooks": [{"type": "command", "command", "timeout"}]}``.

The command we install is portable, ``git-gasp-hook AGENT`` (`hook/entry.py`: it only
queues the payload) found through the agent's PATH, in every file but the local one,
which names this machine's ``git-gasp-hook`` by its absolute path (for a git-gasp that
is not on PATH). Only the events the agent documents are installed (Claude Code 2.1.328:
all of ``HOOK_EVENTS``; Codex 0.171.0: not ``PostToolUseFailure``). Claude Code runs
``PreToolUse`` ``"async": true`` (in the background, not waited for): a PreToolUse
queued late, or lost when the agent exits first, changes nothing, since its PostToolUse
records the call when it was not seen. Every other event stays synchronous, since the
drain reads the queue in the order the hooks wrote it: a PostToolUse queued after the
next event, or after SessionEnd closed the run, would be out of order or dropped.

Ours are exactly the command hooks whose command is one of our forms, word for word
(``git-gasp-hook|/…/git-gasp-hook claude-code|codex``, and what older versions
installed, ``git gasp|git-gasp|/…/git-gasp adapt hook --agent claude-code|codex``,
however quoted); a command that does more (``notify.sh && git-gasp-hook …``, a
redirection, a variable) is the user's. Installing keeps the first of ours in each
event that is what it would write, replaces the others (an older form is upgraded) and
appends an entry for an event without one; uninstalling removes only ours (and the
entries, event lists and ``hooks`` object that become empty by that). Nothing else in
the file changes, not even its formatting (``json_edit.py``), and a re-install that
changes nothing does not write.
A file that is not valid JSON, or whose ``hooks`` is not shaped as above, is refused
with one line and left untouched. Writes are atomic and go through a link to its
target, but never out of the project (or, for the user's file, out of $HOME): see
`write_project_file` and `write_user_file`.

The agents' own files (settings.json / hooks.json here, CLAUDE.md / AGENTS.md for
``prime.py``) are replaced atomically through `base.files`: a project file with the work
tree as root, so no directory on the way may be a link (a link as the file itself is
kept and its target written, only if that target lies inside the work tree); a user
file may be a link to anywhere inside ``$HOME``. Anything else is refused with one line
(`UnsafePath`) and left untouched.
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

from git_gasp.adapters.dialects.table import DIALECTS
from git_gasp.adapters.wiring.json_edit import apply_hooks
from git_gasp.base import git, ignore
from git_gasp.base.agentfiles import read_settings
from git_gasp.base.agentnames import AGENTS
from git_gasp.base.errors import FormatError, GaspError
from git_gasp.base.fileops import remove_file
from git_gasp.base.files import SMALL_FILE, atomic_write, link_target, read_file
from git_gasp.store import installs

AGENT_EVENTS = {agent: tuple(d.events) for agent, d in DIALECTS.items()}
HOOK_TIMEOUT_S = 60  # the agent's budget for our hook; a drain it waits for stops at ~20 s
ASYNC_EVENTS = {agent: d.async_events for agent, d in DIALECTS.items()}
HOOK_NAME = "git-gasp"  # an agent that lists hooks by name (Gemini CLI) shows this
HOOK = "git-gasp-hook"  # the program the agents run (`hook.entry.main`)
OLD_FORMS = (["git", "gasp"], ["git-gasp"])  # + "adapt hook --agent AGENT": older versions'
OLD_AGENTS = ("claude-code", "codex")  # the agents older versions installed hooks for


def this_git_gasp(program: str = "git-gasp") -> str | None:
    """`program` of this install (beside this Python), else the one on PATH."""
    beside = Path(sys.executable).with_name(program)
    return str(beside) if beside.exists() else shutil.which(program)


def hook_command(agent: str, *, absolute: bool = False) -> str:
    """The shell command the agent runs: ``git-gasp-hook AGENT``, or with `absolute`
    this install's git-gasp-hook by its path (for a machine-local file)."""
    if not absolute:
        return shlex.join([HOOK, agent])
    exe = this_git_gasp(HOOK)
    if exe is None:
        raise GaspError(f"cannot find the {HOOK} program (next to this Python or on PATH); "
                        "install git-gasp first")
    command = shlex.join([exe, agent])
    if command_agent(command) != agent:  # we could not tell it for ours again
        raise GaspError(f"the path of this git-gasp ({exe}) holds characters a shell "
                        "treats specially; put git-gasp on PATH and install without "
                        "--scope local")
    return command


def on_path_note() -> str | None:
    """A note when `git-gasp-hook` would not be found through PATH here, else None."""
    if shutil.which(HOOK) is not None:
        return None
    exe = this_git_gasp(HOOK)
    where = f"add {Path(exe).parent} to PATH" if exe else "install git-gasp on PATH"
    return (f"note: {HOOK} is not on PATH, and the hooks run `{HOOK}` "
            f"through the agent's PATH: {where} (for Claude Code, `--scope local` names "
            f"this {HOOK} by its path in .claude/settings.local.json instead)")


_SHELL = re.compile(r"[\n\r;&|<>()$`*?\[\]{}~#!\\]")  # any of these: the user's own


def command_agent(command: Any) -> str | None:
    """The agent of `command` when it is exactly one of our hook commands (its words,
    however quoted, and nothing the shell would expand or chain), else None."""
    if not isinstance(command, str) or _SHELL.search(command):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if len(words) == 2 and _program(words[0], HOOK) and words[1] in AGENTS:
        return words[1]
    exe, tail = words[:-4], words[-4:]
    if tail[:3] != ["adapt", "hook", "--agent"] or len(tail) < 4 or tail[3] not in OLD_AGENTS:
        return None
    if exe in OLD_FORMS or (len(exe) == 1 and _program(exe[0], "git-gasp")):
        return tail[3]
    return None


def _program(word: str, name: str) -> bool:
    """`word` runs `name`: by name, or by an absolute path."""
    return word == name or (os.path.isabs(word) and os.path.basename(word) == name)


def is_ours(hook: Any) -> bool:
    return (isinstance(hook, dict) and hook.get("type", "command") == "command"
            and command_agent(hook.get("command")) is not None)


def our_entry(event: str, command: str, agent: str) -> dict[str, Any]:
    d = DIALECTS[agent]
    entry: dict[str, Any] = {}
    if event in d.tool_events:
        entry["matcher"] = "*"
    hook: dict[str, Any] = {"name": HOOK_NAME} if d.named else {}
    hook.update(type="command", command=command,
                timeout=HOOK_TIMEOUT_S * 1000 if d.timeout_ms else HOOK_TIMEOUT_S)
    if event in ASYNC_EVENTS[agent]:
        hook["async"] = True
    entry["hooks"] = [hook]
    return entry


def our_entries(agent: str, command: str) -> dict[str, list[dict]]:
    return {event: [our_entry(event, command, agent)] for event in AGENT_EVENTS[agent]}


@dataclass
class InstallResult:
    path: Path
    changed: bool
    removed: int = 0  # hooks of ours removed
    added: int = 0
    events: int = 0  # events that run our hook after the change


def load_settings(path: Path) -> tuple[str, dict]:
    """The settings file's text and JSON. A link is read at its target only where the
    writers would write through it (inside the project's tree or $HOME)."""
    try:
        real = link_target(path, [project_tree(path.parent.parent), Path.home()]) \
            if path.is_symlink() else path
        text, data = read_settings(path, real=real)
    except FileNotFoundError:
        return "", {}
    except FormatError as exc:
        raise GaspError(f"{exc}; fix it first, it was left untouched") from None
    except OSError as exc:
        raise GaspError(f"cannot read {path}: {exc.strerror or exc}") from None
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict) or not all(isinstance(v, list) for v in hooks.values()):
        raise GaspError(f"{path}: `hooks` is not an object of event lists; it was left "
                        "untouched")
    return text, data


def _merge_event(entries: list, want: dict | None) -> tuple[list, int, bool]:
    """`entries` of one event with ours removed, except the first that runs `want`'s
    command under its matcher (kept as it is); without such a keeper `want` takes the
    place of the first entry that held only ours, else it is appended.
    (entries, hooks of ours removed, whether `want` was put in)."""
    ours = want["hooks"][0] if want else {}
    keeper = None
    for i, entry in enumerate(entries if want is not None else ()):
        if isinstance(entry, dict) and entry.get("matcher") == want.get("matcher") \
                and isinstance(entry.get("hooks"), list):
            j = next((j for j, h in enumerate(entry["hooks"])
                      if is_ours(h) and h.get("command") == ours["command"]
                      and bool(h.get("async")) == bool(ours.get("async"))), None)
            if j is not None:
                keeper = (i, j)
                break
    out: list = []
    removed = 0
    put = False
    for i, entry in enumerate(entries):
        if not (isinstance(entry, dict) and isinstance(entry.get("hooks"), list)):
            out.append(entry)
            continue
        inner = [h for j, h in enumerate(entry["hooks"])
                 if not is_ours(h) or keeper == (i, j)]
        removed += len(entry["hooks"]) - len(inner)
        if len(inner) == len(entry["hooks"]):
            out.append(entry)
        elif inner:
            out.append(dict(entry, hooks=inner))
        elif want is not None and keeper is None and not put:
            out.append(want)
            put = True
    if want is not None and keeper is None and not put:
        out.append(want)
        put = True
    return out, removed, put


def merged(data: dict, agent: str | None, command: str | None) -> tuple[dict | None, int, int]:
    """The ``hooks`` object of `data` with ours for `agent` running `command` (None:
    ours removed), or None when there should be none. (hooks, removed, added)."""
    old = data.get("hooks", {})
    wanted = our_entries(agent, command) if agent and command else {}
    hooks: dict[str, list] = {}
    removed = added = 0
    for event, entries in old.items():
        want = wanted[event][0] if event in wanted else None
        out, gone, put = _merge_event(list(entries), want)
        removed += gone
        added += put
        if out or not entries:  # a list only ours emptied goes; the user's empty one stays
            hooks[event] = out
    for event, entries in wanted.items():
        if event not in old:
            hooks[event] = entries
            added += 1
    if not hooks and ("hooks" not in data or (old and removed)):
        return None, removed, added
    return hooks, removed, added


def merge_hooks(path: Path, agent: str | None, command: str | None, *,
                user_scope: bool = False) -> InstallResult:
    """Install our hooks for `agent` running `command` (None: uninstall) in the settings
    file at `path` (a project's file, or with `user_scope` the user's)."""
    text, data = load_settings(path)
    hooks, removed, added = merged(data, agent, command)
    events = _count_ours(hooks or {})
    same = "hooks" not in data if hooks is None else hooks == data.get("hooks")
    if same:
        return InstallResult(path, False, removed, added, events)
    new = apply_hooks(text, hooks).encode("utf-8")
    if user_scope:
        write_user_file(path, new)
    else:
        write_project_file(path.parent.parent, Path(path.parent.name, path.name), new)
    return InstallResult(path, True, removed, added, events)


def has_ours(path: Path) -> bool:
    """True when the settings file at `path` runs our hook for some event."""
    try:
        return _count_ours(load_settings(path)[1].get("hooks", {})) > 0
    except GaspError:
        return False


def _count_ours(hooks: dict) -> int:
    return sum(any(is_ours(h) for e in entries if isinstance(e, dict)
                   for h in (e.get("hooks") if isinstance(e.get("hooks"), list) else []))
               for entries in hooks.values())


def claude_settings_path(repo: Path, scope: str) -> Path:
    """Claude Code's settings file of `scope`: project, local or user."""
    if scope == "user":
        base = os.environ.get("CLAUDE_CONFIG_DIR")
        return (Path(base) if base else Path.home() / ".claude") / "settings.json"
    if scope == "local":
        return repo / ".claude" / "settings.local.json"
    return repo / ".claude" / "settings.json"


def settings_path(agent: str, repo: Path, scope: str = "project") -> Path:
    """The hook settings file of `agent` for `scope` (its dialect's table; Claude Code's
    user file honours $CLAUDE_CONFIG_DIR)."""
    if agent == "claude-code":
        return claude_settings_path(repo, scope)
    where = DIALECTS[agent].settings[scope]
    return Path.home() / where[2:] if where.startswith("~/") else repo / where


LOCAL_SETTINGS = ".claude/settings.local.json"


def keep_local_untracked(repo: Path) -> str | None:
    """Make git ignore `repo`'s .claude/settings.local.json (as Claude Code does when it
    creates the file) unless it already does: a line in this clone's info/exclude,
    never in a committed file. Returns what it did or found worth saying, if anything."""

    tree = project_tree(repo)
    rel = os.path.relpath(os.path.realpath(repo / LOCAL_SETTINGS), tree)
    try:
        if rel.startswith(".." + os.sep) or git.is_ignored(tree, rel):
            return None
        if git.is_tracked(tree, rel):
            return (f"note: {LOCAL_SETTINGS} is tracked by git, so this machine's path in "
                    f"it would be committed: `git rm --cached {LOCAL_SETTINGS}`")
        exclude = git.git_path(tree, "info/exclude")
        common = git.common_dir(tree)
    except GaspError:
        return None  # not a git work tree: nothing to keep out of commits
    try:
        old = read_file(exclude, limit=SMALL_FILE)
    except FileNotFoundError:
        old = b""
    except OSError as exc:
        raise GaspError(f"cannot read {exclude}: {exc.strerror or exc}") from None
    sep = b"" if not old or old.endswith(b"\n") else b"\n"
    line = ignore.pattern(rel.replace(os.sep, "/"))
    atomic_write(exclude, old + sep + line + b"\n", root=common, make_parents=True)
    installs.remember_exclude(tree, line.decode("utf-8", "surrogateescape"))
    return f"added {LOCAL_SETTINGS} to {exclude} (kept out of commits)"


def codex_hooks_path(repo: Path) -> Path:
    return repo / ".codex" / "hooks.json"


def codex_trust_note(repo: Path) -> str:
    """What Codex needs before it runs project hooks, and whether config.toml has it."""
    home = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
    config = home / "config.toml"
    key = f"[projects.{json.dumps(str(repo.resolve()))}]"
    try:
        projects = read_settings(config)[1].get("projects")
    except GaspError:
        projects = None
    project = projects.get(str(repo.resolve())) if isinstance(projects, dict) else None
    if isinstance(project, dict) and project.get("trust_level") == "trusted":
        return f"Codex trusts this project ({config} has {key} trust_level = \"trusted\")."
    return ("Codex runs project hooks only for trusted projects. Add to "
            f"{config}:\n\n  {key}\n  trust_level = \"trusted\"\n\n"
            "or run `codex exec --dangerously-bypass-hook-trust …` (untrusted hooks are "
            "skipped silently).")


# -- writing the agents' own files -------------------------------------------------------
def project_tree(project: Path) -> Path:
    """The git work tree around `project` (resolved), or `project` itself outside git."""
    real = Path(os.path.realpath(project))
    try:
        return git.work_tree_top(real)
    except GaspError:
        return real


def write_project_file(project: Path, rel: str | Path, data: bytes) -> Path:
    """Replace `project`/`rel` with `data`; return the path written (a link's target)."""
    real = Path(os.path.realpath(project))
    tree = project_tree(real)
    installs.remember_file(tree, real / rel)  # what `git gasp uninstall` gives back
    return atomic_write(real / rel, data, root=tree, link_targets_within=[tree],
                        make_parents=True)


def put_own_file(project: Path, rel: str, current: str, new: str | None
                 ) -> tuple[Path, bool]:
    """Make git-gasp's own file `project`/`rel` (holding `current` now, "" when absent)
    hold `new`, or remove it (None); (path, whether it changed). The caller has made
    sure the file is git-gasp's (an agent's hook file or plugin of its own)."""
    path = project / rel
    if new is None:
        if not current:
            return path, False
        remove_file(path)
        return path, True
    if current == new:
        return path, False
    write_project_file(project, rel, new.encode("utf-8"))
    return path, True


def write_user_file(path: Path, data: bytes) -> Path:
    """Replace the user-scope file `path` with `data` (a link may lead inside $HOME)."""
    return atomic_write(path, data, link_targets_within=[Path.home()], make_parents=True)
