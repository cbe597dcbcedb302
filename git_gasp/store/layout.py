"""Create the Part I layout for a new agent repo and make its first commit."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from git_gasp.base.errors import GaspError, UsageError
from git_gasp.base.files import atomic_write, read_file, refuse_links
from git_gasp.odb.write import add_paths, commit_index, discover_or_init, head_tree, index_tree
from git_gasp.protocol.identity import identity_hash
from git_gasp.store.attributes import attribute_lines, updated_gitattributes

# the lease and HEAD are local-only (spec Part I); the rest are the names of the
# temporary files a killed or failed writer could leave (lease.py, base.files)
GITIGNORE_LINES = (".agent/lease", ".agent/HEAD", ".agent/.lease.*", ".*.tmp")
_AGENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def default_agent_id(root: Path) -> str:
    """A valid agent id derived from the directory name."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", root.resolve().name).strip("-._")
    return name or "agent"


def validate_agent_id(agent_id: str) -> str:
    if not _AGENT_ID.match(agent_id):
        raise UsageError(
            f"agent id {agent_id!r} must be 1-128 letters, digits, '.', '_' or '-' "
            "starting with a letter or digit"
        )
    return agent_id


def identity_text(agent_id: str) -> bytes:
    return (
        f"# Identity\n\nI am {agent_id}. Describe who this agent is, what it is for, and the\n"
        "hard rules it never breaks.\n\nIdentity is human-gated: change it in one commit that "
        "also updates\n`identity_hash` in AGENT.md and records the approving decision in the log.\n"
    ).encode()


def manifest_text(agent_id: str, ident_hash: str) -> bytes:
    return (
        f"# {agent_id}\n\n"
        "This repository is an agent's durable state under the Git Agent State Protocol\n"
        "(GASP). Check it with `git gasp check`; fold its log with `git gasp fold`.\n\n"
        "```yaml\n"
        "spec_version: 1\n"
        f"agent_id: {json.dumps(agent_id)}\n"
        f"identity_hash: {ident_hash}\n"
        "executor: .agent/config.toml\n"
        "```\n"
    ).encode()


def layout_files(agent_id: str) -> dict[str, bytes]:
    """Relative path -> content of every file `init` creates (except .gitignore)."""
    ident = identity_text(agent_id)
    return {
        "AGENT.md": manifest_text(agent_id, identity_hash([(b"identity/IDENTITY.md", ident)])),
        "identity/IDENTITY.md": ident,
        "skills/.gitkeep": b"",
        "state/events.jsonl": b"",
        "memory/facts.jsonl": b"",
        "memory/active_memory.md": b"# Active memory\n\nNo facts yet.\n",
        "journal/JOURNAL.md": b"# Journal\n",
        ".agent/config.toml": (
            b"# Executor binding: swapping model or provider touches this file only.\n"
            b"[executor]\nmodel = \"\"\nprovider = \"\"\n"
        ),
    }


@dataclass
class Created:
    """What init wrote, so a failure can take it back."""

    files: list[Path] = field(default_factory=list)
    dirs: list[Path] = field(default_factory=list)
    edited: dict[Path, bytes] = field(default_factory=dict)
    index: tuple[Path, bytes | None] | None = None
    undo: list = field(default_factory=list)  # callables: hooks and git config to take back

    def rollback(self) -> None:
        for step in reversed(self.undo):
            step()
        if self.index is not None:
            path, old = self.index
            if old is None:
                path.unlink(missing_ok=True)
            else:
                atomic_write(path, old)
        for path in reversed(self.files):
            path.unlink(missing_ok=True)
        for path, old in self.edited.items():
            atomic_write(path, old)
        for path in reversed(self.dirs):
            if path.exists():
                shutil.rmtree(path, ignore_errors=True)


def _write_new(path: Path, data: bytes, created: Created, root: Path | None = None) -> None:
    if root is not None:
        refuse_links(path, root)  # a committed link (a cloned repo's) is never written
    for parent in reversed(path.parents):
        if not parent.exists():
            parent.mkdir()
            created.dirs.append(parent)
    with open(path, "xb") as fh:
        created.files.append(path)
        fh.write(data)


def _ensure_gitignore(root: Path, created: Created) -> None:
    path = refuse_links(root / ".gitignore", root)
    old = read_file(path, root=root) if path.exists() else None
    have = set(old.decode("utf-8", "replace").splitlines()) if old is not None else set()
    missing = [line for line in GITIGNORE_LINES if line not in have]
    if not missing:
        return
    if old is None:
        _write_new(path, ("\n".join(missing) + "\n").encode(), created)
        return
    created.edited[path] = old
    sep = b"" if old.endswith(b"\n") or not old else b"\n"
    atomic_write(path, old + sep + ("\n".join(missing) + "\n").encode(), root=root)


def _ensure_gitattributes(root: Path, created: Created) -> None:
    """The merge=gasp lines for the append-only files, committed with the layout."""
    path = refuse_links(root / ".gitattributes", root)
    old = read_file(path, root=root) if path.exists() else None
    new = updated_gitattributes(old, attribute_lines(root))
    if new is None:
        return
    if old is None:
        _write_new(path, new, created)
        return
    created.edited[path] = old
    atomic_write(path, new, root=root)


InstallHooks = Callable[[Path], Callable[[], None]]


def init_agent(root: Path, agent_id: str | None = None, *,
               install_hooks: InstallHooks | None = None) -> tuple[str, bytes]:
    """Create the layout at `root` in a (new or enclosing) git repo and commit it.

    `install_hooks(root)`, when given (the CLI passes the hooks layer's installer),
    installs the guard and merge driver before the commit and returns the function
    that takes them back; the `.gitattributes` naming the driver is part of the
    commit. Returns (agent id, commit id). Refuses to touch an existing agent repo and
    rolls back every file (and hook, and config key) it wrote when anything fails.
    What the hook installer did goes to `notes` when given.
    """
    agent_id = validate_agent_id(agent_id or default_agent_id(root))
    if root.exists() and not root.is_dir():
        raise UsageError(f"{root}: not a directory")
    for marker in ("AGENT.md", "state/events.jsonl"):
        if (root / marker).exists() or (root / marker).is_symlink():
            raise GaspError(f"{root / marker} exists: {root} is already an agent repo; "
                            "nothing was changed")
    created = Created()
    if not root.exists():
        root.mkdir(parents=True)
        created.dirs.append(root)
    try:
        with discover_or_init(str(root)) as repo:
            _refuse_staged_changes(repo)
            for rel, data in layout_files(agent_id).items():
                _write_new(root / rel, data, created, root)
            _ensure_gitignore(root, created)
            _ensure_gitattributes(root, created)
            top = Path(repo.path).resolve()
            paths = [os.path.relpath(p, top) for p in created.files] + [
                os.path.relpath(p, top) for p in created.edited
            ]
            index_path = Path(repo.index_path())
            created.index = (index_path,
                             read_file(index_path) if index_path.exists() else None)
            add_paths(repo, [str(top / p) for p in paths])
            if install_hooks is not None:
                created.undo.append(install_hooks(root))
            commit = commit_index(repo, f"gasp: initialise agent {agent_id}\n".encode())
    except BaseException:
        created.rollback()
        raise
    return agent_id, commit


def _refuse_staged_changes(repo) -> None:
    """Init commits only its own files: refuse when the index already differs from HEAD."""
    tree, staged = head_tree(repo), index_tree(repo)
    if tree is None:
        if staged is not None:
            raise GaspError("the index has staged files; commit or unstage them before init")
        return
    if staged != tree:
        raise GaspError("the index has staged changes; commit or unstage them before init")
