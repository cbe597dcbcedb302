"""Writing the agents' own files: settings.json / hooks.json, CLAUDE.md / AGENTS.md.

Each is replaced atomically through `base.files`. A project file is written with the
project's work tree as root, so no directory on the way may be a link; when the file
itself is a link, the link is kept and its target written, but only if that target
lies inside the work tree. A user-scope file (``~/.claude/settings.json``) may be a
link to anywhere inside ``$HOME``. Anything else is refused with one line
(`UnsafePath`) and left untouched.
"""

from __future__ import annotations

import os
from pathlib import Path

from git_gasp.base import git
from git_gasp.base.errors import GaspError
from git_gasp.base.files import atomic_write


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
    return atomic_write(real / rel, data, root=tree, link_targets_within=[tree],
                        make_parents=True)


def write_user_file(path: Path, data: bytes) -> Path:
    """Replace the user-scope file `path` with `data` (a link may lead inside $HOME)."""
    return atomic_write(path, data, link_targets_within=[Path.home()], make_parents=True)
