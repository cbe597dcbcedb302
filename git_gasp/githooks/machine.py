"""`git gasp install`: what every clone on this machine needs and no commit can carry.

A clone's `.gitattributes` (committed) says ``merge=gasp`` for the append-only files,
but git only runs a driver its config defines, and config is never cloned. As
``git lfs install`` does for its filter, the driver is defined once in the user's
global git config (``git config --global``: ``$GIT_CONFIG_GLOBAL``, else
``~/.gitconfig`` or the XDG file), so a fresh clone merges concurrent log appends under
a plain ``git pull``. `uninstall` removes exactly those keys, and only while they
still run git-gasp's driver.
"""

from __future__ import annotations

import os

from git_gasp.base.errors import GaspError
from git_gasp.base.git import run
from git_gasp.store.attributes import DRIVER, DRIVER_ARGS, DRIVER_NAME, driver_command

SECTION = f"merge.{DRIVER}"
KEYS = (f"{SECTION}.name", f"{SECTION}.driver")


class ForeignDriver(GaspError):
    """The global config defines a `merge.gasp` driver that is not git-gasp's."""


def _cwd() -> str:
    """Where global-config git runs: the home directory (no repository's local
    config, hooks or includes are involved), else the current one."""
    home = os.path.expanduser("~")
    return home if os.path.isdir(home) else os.getcwd()


def global_get(key: str) -> str | None:
    """`key` from the user's global git config, or None when unset."""
    proc = run(_cwd(), "config", "--global", "--get", key, check=False)
    return os.fsdecode(proc.stdout.rstrip(b"\n")) if proc.returncode == 0 else None


def is_ours(driver: str | None) -> bool:
    """True if a `merge.gasp.driver` value runs git-gasp's merge driver."""
    return driver is not None and driver.endswith(" " + DRIVER_ARGS)


def install(*, force: bool = False) -> list[str]:
    """Define the union merge driver in the global git config; the messages to print.

    A `merge.gasp.driver` that is not git-gasp's is refused (`ForeignDriver`) unless
    `force`. Running it twice changes nothing."""
    wanted = {KEYS[0]: DRIVER_NAME, KEYS[1]: driver_command()}
    current = {key: global_get(key) for key in KEYS}
    if current[KEYS[1]] is not None and not is_ours(current[KEYS[1]]) and not force:
        raise ForeignDriver(f"the global git config already defines {KEYS[1]} = "
                            f"{current[KEYS[1]]!r}, which is not git-gasp's; nothing was "
                            "changed (--force replaces it)")
    if current == wanted:
        return [f"git-gasp is installed: the merge driver ({SECTION}) is in the global git "
                "config already"]
    for key, value in wanted.items():
        if current[key] != value:
            run(_cwd(), "config", "--global", key, value)
    return [f"defined the merge driver ({SECTION}) in the global git config: every clone "
            "on this machine merges the append-only files with it",
            "per clone, `git gasp install-hooks` still adds the commit guard"]


def uninstall() -> list[str]:
    """Remove what `install` defined from the global git config; the messages to print."""
    driver = global_get(KEYS[1])
    if driver is None and global_get(KEYS[0]) is None:
        return [f"nothing to remove: the global git config defines no {SECTION}"]
    if driver is not None and not is_ours(driver):
        raise ForeignDriver(f"the global git config's {KEYS[1]} = {driver!r} is not "
                            "git-gasp's; it was left as it is")
    for key in KEYS:
        run(_cwd(), "config", "--global", "--unset-all", key, check=False)
    proc = run(_cwd(), "config", "--global", "--get-regexp", rf"^{SECTION}\.", check=False)
    if proc.returncode != 0:  # the section is empty now: leave no bare [merge "gasp"]
        run(_cwd(), "config", "--global", "--remove-section", SECTION, check=False)
    return [f"removed the merge driver ({SECTION}) from the global git config; clones "
            "that registered it themselves (install-hooks) keep theirs"]
