"""The live hook's opt-in sync: after a session's boundary commit, `git gasp sync`.

``git gasp adapt claude-code|codex install --sync`` sets ``gasp.sync = true`` in the
clone's own config (per clone: which clones push is the machine's business, not the
project's). A boundary commit then leaves ``<gitdir>/gasp/sync.requested``; the hook
process syncs once it has recorded its queue and let go of the lease (still under
``hook.lock``, so no other hook records meanwhile), within what is left of its time
budget, and logs the outcome line to ``adapter.log``. It never raises: a sync that
cannot run now leaves the request for the next hook.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from git_gasp.base import git
from git_gasp.base.errors import GaspError
from git_gasp.base.fileops import remove_file
from git_gasp.base.files import atomic_write
from git_gasp.sync.sync import Options, sync

CONFIG_KEY = "gasp.sync"
REQUEST = "sync.requested"
MIN_BUDGET_S = 3.0  # less time left than this: the next hook syncs
ATTEMPTS = 3


def enabled(root: str | os.PathLike) -> bool:
    """Whether this clone opted in (``gasp.sync``)."""
    proc = git.run(root, "config", "--bool", "--get", CONFIG_KEY, check=False)
    return proc.returncode == 0 and proc.stdout.strip() == b"true"


def set_enabled(root: str | os.PathLike, on: bool) -> str:
    """Opt this clone in or out; what was done, in one line."""
    if on:
        git.config_set_local(root, CONFIG_KEY, "true")
        return (f"set {CONFIG_KEY} = true in this clone's git config: each session's "
                "boundary commit is followed by `git gasp sync`")
    if git.config_get(root, CONFIG_KEY) is None:
        return ""
    git.config_unset_local(root, CONFIG_KEY)
    return f"removed {CONFIG_KEY} from this clone's git config"


def request(root: str | os.PathLike) -> bool:
    """After a boundary commit: ask for a sync when the clone opted in."""
    try:
        if not enabled(root):
            return False
        gitdir = git.git_dir(root)
        atomic_write(os.path.join(gitdir, "gasp", REQUEST), b"", root=gitdir, make_parents=True)
        return True
    except (GaspError, OSError):
        return False


def run_requested(root: str, gdir: str, deadline: float) -> str | None:
    """Sync when a boundary commit asked for it; the line to log (None: nothing asked)."""
    flag = os.path.join(gdir, REQUEST)
    if not Path(flag).exists():
        return None
    try:
        if not enabled(root):
            remove_file(flag)
            return None
        left = deadline - time.monotonic()
        if left < MIN_BUDGET_S:
            return f"sync: {left:.1f} s of the hook's budget left; the next hook syncs"
        remove_file(flag)
        outcome = sync(root, Options(attempts=ATTEMPTS, max_wait=min(5.0, left / 3),
                                     timeout=left / 3, keep_conflict=False))
        if outcome.status == "cannot-start":
            atomic_write(flag, b"", root=os.path.dirname(gdir))  # try again at the next hook
        return f"sync: {outcome.line()} (exit {outcome.exit_code})"
    except Exception as exc:  # noqa: BLE001 - a hook never breaks the agent
        return f"sync: error: {type(exc).__name__}: {exc}"
