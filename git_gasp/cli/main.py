"""The `git-gasp` entry point: the fast paths, then the click group (`cli.group`) whose
subcommands (`cli.table`) load lazily; every error goes through `cli.handler`.

Nothing heavy is imported at start-up, not even click: what git runs on every commit,
``git gasp hook NAME``, what a server runs on every push, ``git gasp hook pre-receive
[--check]``, and ``--version`` run without it (`hook_main`, `receive_main`), with the
same output, exit codes and one-line errors as through click, which parses everything
else (`click_main`); each command's module is imported when that command runs. The
agent hook is a program of its own, ``git-gasp-hook`` (`adapters.agent_hook.entry`).
"""

from __future__ import annotations

import sys

from git_gasp.cli.handler import exit_for_error, leave

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

HOOK_NAMES = ("pre-commit", "pre-merge-commit")


def hook_name(argv: list[str]) -> str | None:
    """The hook `argv` runs when it is exactly ``hook NAME``, else None (click parses it)."""
    if len(argv) == 2 and argv[0] == "hook" and argv[1] in HOOK_NAMES:
        return argv[1]
    return None


def hook_main(name: str) -> NoReturn:
    """Run hook `name` without click (what `git gasp hook NAME` runs)."""
    import gc

    gc.disable()  # a short run that exits at once: no collection pauses while it loads
    try:
        from git_gasp.cli.commands.githook_run import run_hook

        run_hook(name)
    except BaseException as exc:  # noqa: BLE001 - the one handler decides
        exit_for_error(exc)


def receive_main(check: bool) -> NoReturn:
    """Run the server's ``git gasp hook pre-receive [--check]`` without click."""
    try:
        from git_gasp.cli.commands.githook_run import pre_receive

        code = pre_receive(check)
    except BaseException as exc:  # noqa: BLE001 - the one handler decides
        exit_for_error(exc)
    leave(code)


def main(argv: list[str] | None = None) -> NoReturn:
    """Run the CLI, turning known errors into one line and an exit code."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:  # click's own text (a test compares them), without click
        from git_gasp import __version__
        from git_gasp.cli.table import VERSION_PROG

        sys.stdout.write(f"{VERSION_PROG}, version {__version__}\n")
        sys.stdout.flush()
        sys.exit(0)
    name = hook_name(args)
    if name is not None:
        hook_main(name)
    if args in (["hook", "pre-receive"], ["hook", "pre-receive", "--check"]):
        receive_main(check=len(args) == 3)
    click_main(args)


def click_main(argv: list[str] | None = None) -> NoReturn:
    """`main` through click for every command (the fast paths too: the path `main` skips)."""
    from git_gasp.cli.group import run_click

    run_click(argv)


if __name__ == "__main__":  # pragma: no cover
    main()
