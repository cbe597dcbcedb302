"""Where the agent's state lives: the one resolver every command, the agents' hooks,
`sync`, `doctor` and `init` ask (DESIGN 2b).

Rules, in order (man git-gasp(1), "WHERE THE STATE LIVES"):

1. An explicit configuration wins: ``gasp.state`` in the repository's own config (its
   local and worktree scopes, read as git reads them: includes, ``includeIf``,
   ``extensions.worktreeConfig``, quoting) names the state directory, relative to the
   git common dir or absolute. When it names the state branch's worktree
   (``gasp.stateBranch``) and that worktree is gone, it is recreated from the branch:
   a worktree is only a checkout.
2. Else the nearest ``AGENT.md`` at or above the start (up to the work tree's top) that
   is a GASP manifest (spec Part I: ``spec_version``, ``agent_id``, ``identity_hash``,
   ``executor``); any other file of that name (Amp's agent instructions, say) is not an
   agent.

The config is read by git (one ``git config --show-scope --includes --get-regexp``:
includes, ``includeIf``, the worktree scope and quoting are git's own), never guessed
from a word in it; git is not started when the repository's config files surely set
neither key (no line begins with it, nothing is included: `_may_set`). The common dir
is `base.gitdir.discover`'s.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from git_gasp.base import git
from git_gasp.base.errors import GaspError, UsageError
from git_gasp.base.fileops import read_regular_file
from git_gasp.base.gitdir import GitDir, discover
from git_gasp.protocol.manifest import ManifestError, parse_manifest
from git_gasp.store.joining import remote_state_branch
from git_gasp.store.stateworktree import recreate

MANIFEST = "AGENT.md"
SECTION, KEY = "gasp", "state"  # gasp.state: the state's directory
BRANCH_KEY = "stateBranch"  # gasp.stateBranch: its branch, when init --branch made it
_MANIFEST_FIELDS = ("spec_version", "agent_id", "identity_hash", "executor")
_REPO_SCOPES = (b"local", b"worktree")


class Configured:
    """What the repository's config says of its state: `path` (absolute, normalised),
    `branch` (``gasp.stateBranch``, or None) and `common`, the git common dir."""

    def __init__(self, path: str, branch: str | None, common: str) -> None:
        self.path, self.branch, self.common = path, branch, common


def is_manifest(directory: str) -> bool:
    """True when `directory` holds an AGENT.md that is a GASP manifest (all four of the
    spec's fields), not any file of that name."""
    try:
        data = read_regular_file(os.path.join(directory, MANIFEST), limit=1 << 20)
    except OSError:
        return False
    if data is None:
        return False
    try:
        raw = parse_manifest(data).raw
    except ManifestError:
        return False
    return all(field in raw for field in _MANIFEST_FIELDS)


def root_above(start: str, *, with_log: bool = False) -> str | None:
    """The nearest directory at or above `start` holding a GASP manifest (`with_log`:
    and the default log beside it), up to the git work tree's top (or the filesystem's
    root outside one); None if there is none."""
    for candidate in (start, *[str(p) for p in Path(start).parents]):
        if os.path.isfile(os.path.join(candidate, MANIFEST)) and is_manifest(candidate) and (
                not with_log or os.path.exists(os.path.join(candidate, "state", "events.jsonl"))):
            return candidate
        if Path(candidate, ".git").exists():
            return None
    return None


def _config_values(start: str, *keys: str) -> tuple[dict[str, str], str] | None:
    """The repository's own values of ``gasp.KEY`` for `keys` (local and worktree scopes,
    the last one set winning, as git reads them), and its git common dir; None outside
    a repository."""
    found = discover(start)
    if found is None:
        return None
    if not _may_set(found, keys):
        return {}, found.common
    wanted = "|".join(key.lower() for key in keys)
    try:
        proc = git.run(start, "config", "-z", "--show-scope", "--includes", "--get-regexp",
                       f"^{SECTION}\\.({wanted})$", check=False)
    except (GaspError, OSError, ValueError):
        return None
    names = {f"{SECTION}.{key}".lower(): key for key in keys}
    values = {}
    fields = proc.stdout.split(b"\0") if proc.returncode == 0 else []
    for scope, entry in zip(fields[0::2], fields[1::2], strict=False):
        name, _, value = entry.partition(b"\n")
        key = names.get(os.fsdecode(name))
        if scope in _REPO_SCOPES and key is not None:
            values[key] = os.fsdecode(value)
    return values, found.common


def _may_set(found: GitDir, keys: tuple[str, ...]) -> bool:
    """False only when the repository's own config files surely set none of `keys`: no
    line of theirs begins with one (a key is never quoted, escaped nor continued; a
    section header may precede it) and they include nothing. True: ask git."""
    words = b"|".join(re.escape(key.lower().encode()) for key in keys)
    key_line = re.compile(rb"(?im)(?:^|\])[^\S\n]*(?:" + words + rb")[^\S\n]*(?:=|$|[;#\r])")
    for path in (os.path.join(found.common, "config"),
                 os.path.join(found.path, "config.worktree")):
        try:
            text = read_regular_file(path, limit=1 << 24)
        except OSError:
            return True
        if text is not None and (b"include" in text.lower() or key_line.search(text)):
            return True
    return False


def configured(start: str | os.PathLike) -> Configured | None:
    """What the config of the repository around `start` says of its state (`Configured`),
    or None when it names none."""
    found = _config_values(os.fspath(start), KEY, BRANCH_KEY)
    if found is None:
        return None
    values, common = found
    if not values.get(KEY):
        return None
    path = os.path.normpath(os.path.join(common, values[KEY]))
    return Configured(path, values.get(BRANCH_KEY) or None, common)


def is_state_branch(root: str | os.PathLike) -> bool:
    """True when `root` is the worktree of the state branch its repository's config names
    (``gasp.stateBranch``: `init --branch` made it, git-gasp's own), not the project nor
    a folder of it (`init PATH` names those in ``gasp.state`` alone)."""
    conf = configured(root)
    return conf is not None and conf.branch is not None and \
        os.path.realpath(conf.path) == os.path.realpath(root)


def _state_dir(conf: Configured | None) -> str | None:
    if conf is None:
        return None
    if not os.path.exists(conf.path) and conf.branch:
        recreate(conf.common, conf.path, conf.branch)
    return conf.path if is_manifest(conf.path) else None


def find_root(start: str | os.PathLike) -> str | None:
    """The agent root for a command started in `start`: the state the repository's
    config names, else the nearest GASP manifest at or above; None when there is none.
    A str, whatever `start` was."""
    here = os.fspath(start)
    conf = configured(here)
    if conf is not None:
        return _state_dir(conf)
    return root_above(here)


class NotAnAgentRepository(GaspError):
    """A command that needs an agent's state ran where there is none (exit 2, as git
    exits outside a repository)."""

    exit_code = 2
    remote: str | None = None  # REMOTE/BRANCH holding the state this clone may join


def not_an_agent_repository(where: str, *, above: bool = True) -> NotAnAgentRepository:
    """The one error every command gives where there is no agent's state: it names what
    to run, `init --branch` first where a remote has the state branch (a clone joins)."""
    conf = configured(where) if above else None
    if conf is not None:
        return NotAnAgentRepository(
            f"not an agent repository: gasp.state names {conf.path}, which holds no GASP "
            "manifest; fix or unset it (git config --unset gasp.state)")
    remote = remote_state_branch(where) if above else None
    if remote is not None:
        error = NotAnAgentRepository(
            f"not an agent repository yet: {remote} holds this project's agent history; "
            "join it: git gasp init --branch")
        error.remote = remote
        return error
    place = f"no {MANIFEST} in {where}" + (" or above, and this repository's config "
                                           "names no state" if above else "")
    return NotAnAgentRepository(f"not an agent repository: {place}; run `git gasp init` "
                                "(or `git gasp init --branch` in a project's repository)")


def require_root(start: str | os.PathLike) -> str:
    """`find_root`, or `not_an_agent_repository` when there is no state to act on."""
    root = find_root(start)
    if root is None:
        raise not_an_agent_repository(str(Path(start)))
    return root


def find_agent_root(path: str | None) -> str:
    """The agent root for PATH; without PATH, the nearest directory up holding AGENT.md,
    else the state directory the repository's config names (`store.location`).

    The upward search stops at the git work-tree root. A PATH that holds AGENT.md or
    the log is the root; another PATH is searched up from as the current directory is.
    No agent found is the one "not an agent repository" error (`store.location`, exit
    2); a missing manifest of a directory that holds a log is check 6's to report. A
    str as `str()` of a pathlib.Path shows it.
    """
    if path is not None:
        root = str(Path(path))
        if not Path(root).exists():
            raise UsageError(f"{path}: no such directory")
        if not Path(root).is_dir():
            raise UsageError(f"{path}: not a directory")
        if _agent_like(root):
            return root
        found = find_root(str(Path(os.path.abspath(root))))  # inside an agent: that agent
        if found is None:
            raise not_an_agent_repository(path)
        return found
    cwd = str(Path(os.getcwd()))
    return cwd if find_root(cwd) is None and _agent_like(cwd) else require_root(cwd)


def _agent_like(root: str) -> bool:
    return Path(root, MANIFEST).exists() or Path(root, "state", "events.jsonl").exists()


def resolve_agent_root(path: str | None) -> Path:
    """`find_agent_root` as a pathlib.Path."""
    return Path(find_agent_root(path))
