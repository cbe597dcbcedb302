"""`git gasp install`: what every clone on this machine needs and no commit can carry.

A clone's `.gitattributes` (committed) says ``merge=gasp`` for the append-only files,
but git only runs a driver its config defines, and config is never cloned. As
``git lfs install`` does for its filter, the driver is defined once in the user's
global git config (``git config --global``: ``$GIT_CONFIG_GLOBAL``, else
``~/.gitconfig`` or the XDG file), so a fresh clone merges concurrent log appends under
a plain ``git pull``. Config is read as git reads it (included files, every value of
a key); `uninstall` removes exactly the values it wrote, and only while they still run
git-gasp's driver.
"""

from __future__ import annotations

import os
from typing import NamedTuple

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


class Value(NamedTuple):
    """One value of a key as git reads it: its scope, the file it is in, the value."""

    scope: str
    origin: str
    value: str


def values(key: str) -> list[Value]:
    """Every value of `key` in the system and global git config, read as git reads it:
    files that config includes (`[include]`, `[includeIf]`) followed, every value of a
    key set more than once, in git's order (the last one is what git uses)."""
    proc = run(_cwd(), "config", "--show-scope", "--show-origin", "--includes", "-z",
               "--get-all", key, check=False)
    if proc.returncode != 0:
        return []  # unset (1), or no config file at all
    words = [os.fsdecode(w) for w in proc.stdout.split(b"\0")]
    found = [Value(*words[i:i + 3]) for i in range(0, len(words) - 2, 3)]
    return [v for v in found if v.scope in ("system", "global")]


def global_get(key: str) -> str | None:
    """The value of `key` git uses from the system and global config, or None."""
    found = values(key)
    return found[-1].value if found else None


def is_ours(driver: str | None) -> bool:
    """True if a `merge.gasp.driver` value runs git-gasp's merge driver."""
    return driver is not None and driver.endswith(" " + DRIVER_ARGS)


def _where(v: Value) -> str:
    return v.origin.removeprefix("file:")


def install(*, force: bool = False) -> list[str]:
    """Define the union merge driver in the global git config; the messages to print.

    A `merge.gasp.driver` that is not git-gasp's, in any file git reads for the global
    or system config (an included one too), is refused (`ForeignDriver`) unless
    `force`. Running it twice changes nothing."""
    wanted = {KEYS[0]: DRIVER_NAME, KEYS[1]: driver_command()}
    drivers = values(KEYS[1])
    foreign = [v for v in drivers if not is_ours(v.value)]
    if foreign and not force:
        v = foreign[-1]
        raise ForeignDriver(f"{_where(v)} already defines {KEYS[1]} = {v.value!r}, which is "
                            "not git-gasp's; nothing was changed (--force replaces it)")
    current = {key: global_get(key) for key in KEYS}
    if current == wanted and len(drivers) == 1:
        return [f"git-gasp is installed: the merge driver ({SECTION}) is in the global git "
                "config already"]
    for key, value in wanted.items():
        if current[key] != value or len(values(key)) > 1:
            run(_cwd(), "config", "--global", "--replace-all", key, value)
    used = values(KEYS[1])
    if used and used[-1].value != wanted[KEYS[1]]:  # an include after ours wins over it
        raise ForeignDriver(f"{_where(used[-1])} still defines {KEYS[1]} = "
                            f"{used[-1].value!r} after the global config's, and git uses "
                            "the last: remove it there")
    return [f"defined the merge driver ({SECTION}) in the global git config: every clone "
            "on this machine merges the append-only files with it",
            "per clone, `git gasp install-hooks` still adds the commit guard"]


def uninstall() -> list[str]:
    """Remove what `install` defined from the global git config, value by exact value
    (a key someone else set beside ours keeps theirs); the messages to print."""
    drivers = values(KEYS[1])
    if not drivers and not values(KEYS[0]):
        return [f"nothing to remove: the global git config defines no {SECTION}"]
    ours = {v.value for v in drivers if is_ours(v.value) and v.scope == "global"}
    foreign = [v for v in drivers if not is_ours(v.value)]
    if not ours:
        if foreign:
            v = foreign[-1]
            raise ForeignDriver(f"{_where(v)}'s {KEYS[1]} = {v.value!r} is not git-gasp's; "
                                "it was left as it is")
        return [f"nothing to remove: no {SECTION} driver of git-gasp's in the global git "
                "config"]
    for value in sorted(ours):
        _unset_exactly(KEYS[1], value)
    if not foreign:  # the name goes with our driver, only when it is still ours
        _unset_exactly(KEYS[0], DRIVER_NAME)
    proc = run(_cwd(), "config", "--global", "--get-regexp", rf"^{SECTION}\.", check=False)
    if proc.returncode != 0:  # the section is empty now: leave no bare [merge "gasp"]
        run(_cwd(), "config", "--global", "--remove-section", SECTION, check=False)
    said = [f"removed the merge driver ({SECTION}) from the global git config; clones "
            "that registered it themselves (install-hooks) keep theirs"]
    if foreign:
        said.append(f"note: {_where(foreign[-1])} still defines {KEYS[1]} = "
                    f"{foreign[-1].value!r}, which is not git-gasp's; it was left as it is")
    return said


def _unset_exactly(key: str, value: str) -> None:
    """Remove the global config's lines of `key` whose value is exactly `value`."""
    run(_cwd(), "config", "--global", "--fixed-value", "--unset-all", key, value,
        check=False)
