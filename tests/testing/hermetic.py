"""The hermetic environment every test (and the session's template repos) runs in."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.testing.run import git_gasp_exe

# Set here, so kept when every other inherited GIT_* variable is scrubbed.
PINNED = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_COMMITTER_NAME": "Test Committer",
    "GIT_COMMITTER_EMAIL": "committer@example.com",
    "GIT_AUTHOR_DATE": "1767225600 +0000",
    "GIT_COMMITTER_DATE": "1767225600 +0000",
    "GIT_EDITOR": "false",  # a command that would open an editor fails instead of hanging
}
GLOBAL_CONFIG = "[init]\n\tdefaultBranch = main\n[core]\n\tautocrlf = false\n"
# Not git's, but it changes what `git gasp` does: never inherited either.
SCRUBBED = ("GASP_NO_MERGE_DRIVER",)
# Not the suite's concern, but costly: with it every `git gasp` the tests start compiles
# the package's modules afresh (an editable install ships no bytecode). Python writes its
# caches atomically, so concurrent test processes are safe.
UNCACHED = ("PYTHONDONTWRITEBYTECODE",)


def isolate(mp: pytest.MonkeyPatch, home: Path) -> Path:
    """Point HOME, git config and templates into `home`; pin identity and dates.

    Every inherited GIT_* variable (GIT_DIR, GIT_INDEX_FILE, GIT_CONFIG_*, GIT_TRACE…) is
    dropped, so nothing from the developer's machine or an enclosing git leaks in.
    Returns `home`.
    """
    for var in [v for v in os.environ
                if v.startswith("GIT_") or v in SCRUBBED or v in UNCACHED]:
        mp.delenv(var)
    mp.setenv("HOME", str(home))
    mp.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for var, value in PINNED.items():
        mp.setenv(var, value)
    templates = home / "git-templates"  # only an empty hooks/: `git init` copies no samples
    (templates / "hooks").mkdir(parents=True, exist_ok=True)  # git's layout, no samples
    mp.setenv("GIT_TEMPLATE_DIR", str(templates))
    # Make the venv's git-gasp reachable as `git gasp`.
    exe_dir = str(Path(git_gasp_exe()[0]).parent)
    mp.setenv("PATH", exe_dir + os.pathsep + os.environ.get("PATH", ""))
    (home / ".gitconfig").write_text(GLOBAL_CONFIG)
    return home
